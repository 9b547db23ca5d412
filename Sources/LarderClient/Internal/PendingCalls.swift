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
    }

    private var nextCallID: UInt64 = 1
    private var calls: [UInt64: Call] = [:]
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

    mutating func insert(_ call: Call, id: UInt64) { calls[id] = call }

    mutating func remove(_ id: UInt64) -> Call? { calls.removeValue(forKey: id) }

    /// Marks the connection failed and takes every pending call; nil if it had already failed.
    mutating func fail(_ error: RPCError) -> [Call]? {
        guard failure == nil else { return nil }
        failure = error
        let all = Array(calls.values)
        calls.removeAll()
        return all
    }

    /// Removes and returns the calls whose deadline is at or before `now`.
    mutating func takeExpired(now: ContinuousClock.Instant) -> [Call] {
        var expired: [Call] = []
        for (id, call) in calls {
            if let deadline = call.deadline, deadline <= now {
                expired.append(call)
                calls[id] = nil
            }
        }
        return expired
    }

    /// The earliest deadline among pending calls.
    var nearestDeadline: ContinuousClock.Instant? {
        var nearest: ContinuousClock.Instant?
        for call in calls.values {
            if let deadline = call.deadline, nearest.map({ deadline < $0 }) ?? true { nearest = deadline }
        }
        return nearest
    }
}
