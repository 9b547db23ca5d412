import LarderSystem

/// Writes a lock held by another session stopped (PostgreSQL's short `lock_timeout` inside a
/// batch, `StoreConnection.takeLockWaitTimedOut`), set aside so that they do not hold up the
/// other connections' writes, and tried again now and then until `limit` passed since each
/// began to wait; then they fail without another try.
///
/// A connection's writes keep their order: once one of its writes waits here, its later writes
/// wait behind it (`holds(source:)`), and a batch runs none of a source after one of its writes
/// was set aside again (`StoreExecutor.runWriteBatch`). Source 0 (nobody in particular) has no
/// order to keep. Writer thread only.
struct LockWaitingWrites {
    /// A write, since when it has waited (monotonic ns; nil: it has not waited yet), and how
    /// often it was tried and found a lock taken.
    struct Entry {
        let job: StoreWrite
        var waitingSince: UInt64?
        var tries = 0
    }

    /// How long a write may wait for locks in all before it fails.
    let limit: UInt64
    private(set) var entries: [Entry] = []
    private var waitingSources: Set<UInt64> = []
    /// When the writes are tried again: never later than a time already set, and the wait
    /// doubles (from `firstRetry` to `longestRetry`) while the writes tried keep finding the
    /// lock taken.
    private var retryAt: UInt64 = 0
    private var retryWait: UInt64 = LockWaitingWrites.firstRetry
    static let firstRetry: UInt64 = 50_000_000
    static let longestRetry: UInt64 = 400_000_000

    init(limit: UInt64) { self.limit = limit }

    var isEmpty: Bool { entries.isEmpty }

    /// True while a write of `source` waits here: its later writes must wait behind it.
    func holds(source: UInt64) -> Bool { source != 0 && waitingSources.contains(source) }

    /// Sets aside a write that came after one of its source's writes set aside.
    mutating func append(_ job: StoreWrite, now: UInt64) {
        if entries.isEmpty { schedule(now &+ Self.firstRetry) }
        entries.append(Entry(job: job, waitingSince: now))
        if job.source != 0 { waitingSources.insert(job.source) }
    }

    /// How long the writer may sleep before the waiting writes are due; nil when none wait.
    func nanosecondsUntilDue(now: UInt64) -> UInt64? {
        entries.isEmpty ? nil : (retryAt > now ? retryAt - now : 0)
    }

    /// When the waiting writes are due (else nothing): those that have waited `limit` or longer,
    /// to fail without another try, and up to `max` to try again (removed from here), each
    /// source's in order, the sources tried least often first (the others' turn comes as
    /// theirs keep failing). The rest wait on.
    mutating func takeIfDue(now: UInt64, max: Int) -> (expired: [Entry], retry: [Entry]) {
        guard !entries.isEmpty, now >= retryAt else { return ([], []) }
        var expired: [Entry] = []
        var groups: [[Entry]] = []
        var groupOfSource: [UInt64: Int] = [:]
        for entry in entries {
            if let since = entry.waitingSince, now &- since >= limit {
                expired.append(entry)
                continue
            }
            let source = entry.job.source
            if source != 0, let group = groupOfSource[source] {
                groups[group].append(entry)
            } else {
                if source != 0 { groupOfSource[source] = groups.count }
                groups.append([entry])
            }
        }
        // Stable: equal tries keep their order of arrival.
        let ordered = groups.enumerated().sorted { ($0.element[0].tries, $0.offset) < ($1.element[0].tries, $1.offset) }
        var retry: [Entry] = []
        var left: [Entry] = []
        for (_, group) in ordered {
            let room = max - retry.count
            retry.append(contentsOf: group.prefix(room))
            left.append(contentsOf: group.dropFirst(room))
        }
        entries = left
        waitingSources = Set(left.map(\.job.source).filter { $0 != 0 })
        return (expired, retry)
    }

    /// Puts back, ahead of those still waiting here, the writes a batch set aside (in their
    /// order). `round`: the batch tried writes that had waited; `blockedAgain`: one of those
    /// found a lock taken again, so the next round waits longer.
    mutating func setAside(_ writes: [Entry], round: Bool, blockedAgain: Bool, now: UInt64) {
        let wasEmpty = entries.isEmpty
        if !writes.isEmpty {
            entries.insert(contentsOf: writes, at: 0)
            for entry in writes where entry.job.source != 0 { waitingSources.insert(entry.job.source) }
        }
        guard !entries.isEmpty else {
            retryWait = Self.firstRetry
            return
        }
        if round {
            retryWait = blockedAgain ? min(retryWait * 2, Self.longestRetry) : Self.firstRetry
            retryAt = now &+ retryWait
        } else if wasEmpty {
            retryWait = Self.firstRetry
            retryAt = now &+ retryWait
        } else {
            schedule(now &+ retryWait)
        }
    }

    /// Sets the next round no later than `time`.
    private mutating func schedule(_ time: UInt64) {
        retryAt = entries.isEmpty ? time : min(retryAt, time)
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
