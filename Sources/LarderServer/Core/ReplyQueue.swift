/// Replies from other threads for the loop, and whether the loop was woken for them.
struct ReplyQueue {
    var pending: [PendingReply] = []
    /// Connections a call parked on since the loop last looked (`ConnectionUsage.park`): the
    /// loop looks whether they have room already, since their last write may have come first.
    var parkedOn: [UInt64] = []
    var wakeScheduled = false
}
