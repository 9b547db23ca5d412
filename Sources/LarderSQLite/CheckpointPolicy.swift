/// When the WAL gets checkpointed, decided after each commit from the WAL's
/// size and how much of it the background thread has copied (no I/O here).
///
/// The writer can restart the WAL from its beginning only when a transaction
/// starts with every frame copied, which a background checkpoint racing a
/// steady writer never achieves. So the background copies the bulk, woken
/// once per `pages` new pages (not after every commit: each checkpoint fsyncs
/// the database, and one-write commits would pay that every time); once it is
/// within `finishingFrames` of the end, the writer copies that remainder itself
/// (it appends nothing meanwhile) and its next transaction restarts the WAL. If
/// the WAL reaches `pages × fallbackFactor`, the writer checkpoints everything
/// itself, as backpressure.
struct CheckpointPolicy {
    enum Action: Equatable {
        case nothing
        case wakeBackground
        case writerCheckpoint
    }

    /// WAL size, in pages, at which the background is first woken.
    let pages: Int32
    static let fallbackFactor: Int32 = 4
    /// WAL size when the background was last woken (0: not since the WAL restarted).
    private(set) var wokenAt: Int32 = 0

    init(pages: Int32) { self.pages = max(1, pages) }

    /// Frames the writer copies itself once the background copied the rest (a batch or so).
    var finishingFrames: Int32 { min(512, max(1, pages / 8)) }

    /// What to do after a commit that left `walPages` in the WAL, of which the
    /// background's last pass copied `copied` (0 when unknown or from an earlier WAL).
    mutating func afterCommit(walPages: Int32, copied: Int32) -> Action {
        guard walPages >= pages else {
            wokenAt = 0  // the WAL restarted
            return .nothing
        }
        let nearlyCopied = copied > 0 && copied <= walPages && walPages - copied <= finishingFrames
        if nearlyCopied || Int64(walPages) >= Int64(pages) * Int64(Self.fallbackFactor) {
            wokenAt = 0
            return .writerCheckpoint
        }
        guard wokenAt == 0 || walPages < wokenAt || walPages - wokenAt >= pages else { return .nothing }
        wokenAt = walPages
        return .wakeBackground
    }
}
