import LarderWire

/// The calls of one connection waiting for their replies, keyed by call id.
///
/// Plain value state: `Connection` keeps it inside a mutex.
struct PendingCalls {
    typealias Continuation = CheckedContinuation<Result<[UInt8], RPCError>, Never>

    struct Call {
        let continuation: Continuation
        let method: String
        let timeout: Duration?
        let deadline: ContinuousClock.Instant?
        /// Set once its frame is in the `OutboundQueue`.
        var queued = false
    }

    private var nextCallID: UInt64 = 1
    private var calls: [UInt64: Call] = [:]
    private var deadlines = DeadlineHeap()
    /// Set once: why the connection no longer takes calls.
    private(set) var failure: RPCError?
    /// The deadline the reader thread's poll() currently waits for; nil = no timeout.
    var readerWakeDeadline: ContinuousClock.Instant?

    var count: Int { calls.count }

    /// A fresh non-zero call id.
    mutating func makeCallID() -> UInt64 {
        let id = nextCallID
        nextCallID = nextCallID == .max ? 1 : nextCallID + 1
        return id
    }

    mutating func insert(_ call: Call, id: UInt64) {
        calls[id] = call
        if let deadline = call.deadline { deadlines.insert(.init(deadline: deadline, callID: id)) }
    }

    mutating func remove(_ id: UInt64) -> Call? {
        let call = calls.removeValue(forKey: id)
        // Entries of completed calls leave the heap when they reach its top; one call that waits
        // long could let them pile up behind it, so rebuild when most entries are stale.
        if deadlines.count > 4 * calls.count + 1024 {
            deadlines.removeAll()
            for (id, call) in calls {
                if let deadline = call.deadline { deadlines.insert(.init(deadline: deadline, callID: id)) }
            }
        }
        return call
    }

    /// Records that call `id`'s frame is queued for writing; false when the call has ended
    /// already (then its frame must not be queued).
    mutating func markQueued(_ id: UInt64) -> Bool {
        guard calls[id] != nil else { return false }
        calls[id]?.queued = true
        return true
    }

    /// Marks the connection failed and takes every pending call; nil if it had already failed.
    mutating func fail(_ error: RPCError) -> [(id: UInt64, call: Call)]? {
        guard failure == nil else { return nil }
        failure = error
        let all = calls.map { (id: $0.key, call: $0.value) }
        calls.removeAll()
        deadlines.removeAll()
        return all
    }

    /// Removes and returns the calls whose deadline is at or before `now`, with their ids.
    mutating func takeExpired(now: ContinuousClock.Instant) -> [(id: UInt64, call: Call)] {
        var expired: [(id: UInt64, call: Call)] = []
        while let top = deadlines.top, top.deadline <= now {
            deadlines.popTop()
            if let call = calls.removeValue(forKey: top.callID) { expired.append((top.callID, call)) }
        }
        return expired
    }

    /// The earliest deadline among pending calls (drops heap entries of calls already completed).
    mutating func nearestDeadline() -> ContinuousClock.Instant? {
        while let top = deadlines.top {
            if calls[top.callID] != nil { return top.deadline }
            deadlines.popTop()
        }
        return nil
    }
}
