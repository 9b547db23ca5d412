/// Replies from other threads for the loop, and whether the loop was woken for them.
struct ReplyQueue {
    var pending: [PendingReply] = []
    var wakeScheduled = false
}
