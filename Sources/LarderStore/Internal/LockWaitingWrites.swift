import LarderSystem

/// Writes a lock held by another session stopped (PostgreSQL's short `lock_timeout` inside a
/// batch, `StoreConnection.takeLockWaitTimedOut`), set aside so that they do not hold up the
/// other connections' writes, and tried again now and then until `limit` passed since each
/// began to wait.
///
/// A connection's writes keep their order: once one of its writes waits here, its later writes
/// wait behind it (`holds(source:)`), and a batch runs none of a source after one of its writes
/// was set aside again (`StoreExecutor.runWriteBatch`). Writer thread only.
struct LockWaitingWrites {
    /// A write and since when it has waited (monotonic ns); nil for one that has not waited yet.
    struct Entry {
        let job: StoreWrite
        var waitingSince: UInt64?
    }

    /// How long a write may wait for locks in all before it fails with its lock timeout.
    let limit: UInt64
    private(set) var entries: [Entry] = []
    private var waitingSources: Set<UInt64> = []
    /// When the writes are tried again; the wait doubles (from `firstRetry` to `longestRetry`)
    /// while they keep finding the lock taken.
    private var retryAt: UInt64 = 0
    private var retryWait: UInt64 = LockWaitingWrites.firstRetry
    static let firstRetry: UInt64 = 50_000_000
    static let longestRetry: UInt64 = 400_000_000

    init(limit: UInt64) { self.limit = limit }

    var isEmpty: Bool { entries.isEmpty }

    /// True while a write of `source` waits here: its later writes must wait behind it.
    func holds(source: UInt64) -> Bool { waitingSources.contains(source) }

    /// Sets aside a write that came after one of its source's writes set aside.
    mutating func append(_ job: StoreWrite) {
        entries.append(Entry(job: job, waitingSince: nil))
        waitingSources.insert(job.source)
    }

    /// How long the writer may sleep before the waiting writes are due; nil when none wait.
    func nanosecondsUntilDue(now: UInt64) -> UInt64? {
        entries.isEmpty ? nil : (retryAt > now ? retryAt - now : 0)
    }

    /// Every waiting write, in order, when they are due to be tried again (removed from here);
    /// none otherwise.
    mutating func takeIfDue(now: UInt64) -> [Entry] {
        guard !entries.isEmpty, now >= retryAt else { return [] }
        waitingSources.removeAll(keepingCapacity: true)
        defer { entries.removeAll(keepingCapacity: true) }
        return entries
    }

    /// Puts back, ahead of anything set aside since they were taken, the writes a batch set
    /// aside (in their order); one that had not waited yet waits from `start`. `retried`: the
    /// batch tried writes that had waited already, so the next try waits longer.
    mutating func setAside(_ writes: [Entry], startingAt start: UInt64, retried: Bool, now: UInt64) {
        guard !writes.isEmpty else {
            if entries.isEmpty { retryWait = Self.firstRetry }
            return
        }
        entries.insert(contentsOf: writes.map { Entry(job: $0.job, waitingSince: $0.waitingSince ?? start) }, at: 0)
        for entry in writes { waitingSources.insert(entry.job.source) }
        retryWait = retried ? min(retryWait * 2, Self.longestRetry) : Self.firstRetry
        retryAt = now &+ retryWait
    }

    /// Empties the list (the store closes); returns what waited.
    mutating func removeAll() -> [StoreWrite] {
        defer {
            entries.removeAll()
            waitingSources.removeAll()
        }
        return entries.map(\.job)
    }
}
