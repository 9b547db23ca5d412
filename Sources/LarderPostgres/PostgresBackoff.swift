/// When a session may try to reconnect again: right away at first, then after
/// 100 ms, doubling up to `maximum` (1 s) while attempts keep failing, so a
/// database that is away is not hammered and calls in between fail fast.
struct PostgresBackoff {
    static let initial: UInt64 = 100_000_000
    static let maximum: UInt64 = 1_000_000_000

    private var delay: UInt64 = 0
    private var nextAttempt: UInt64 = 0
    /// Why the last attempt failed, for the fast failures until the next one.
    private(set) var lastError = ""

    /// Nanoseconds until the next attempt is allowed, or nil when it is allowed now.
    func remainingWait(now: UInt64) -> UInt64? { now < nextAttempt ? nextAttempt - now : nil }

    mutating func failed(now: UInt64, error: String) {
        delay = delay == 0 ? Self.initial : min(Self.maximum, delay * 2)
        nextAttempt = now + delay
        lastError = error
    }

    mutating func succeeded() {
        delay = 0
        nextAttempt = 0
        lastError = ""
    }
}
