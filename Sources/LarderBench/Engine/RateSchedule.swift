/// The constant arrival schedule of an open-loop run: call `k` is intended
/// to start at `start + k / rate`, whether or not the server keeps up.
///
/// Latency is measured from the intended time (corrected for coordinated
/// omission, as wrk2 does), so a call that had to wait for a free slot
/// counts its wait; the uncorrected latency starts at the actual send.
struct RateSchedule: Sendable {
    /// Monotonic nanoseconds of call 0.
    let start: UInt64
    /// Nanoseconds between intended starts.
    let intervalNanoseconds: Double
    /// The next call to send.
    private(set) var index: UInt64 = 0

    init(ratePerSecond: Double, start: UInt64) {
        precondition(ratePerSecond > 0 && ratePerSecond.isFinite, "rate must be positive")
        self.start = start
        intervalNanoseconds = 1e9 / ratePerSecond
    }

    /// The intended start of call `index`.
    func intendedTime(of index: UInt64) -> UInt64 {
        start &+ UInt64(Double(index) * intervalNanoseconds)
    }

    /// The intended start of the next call.
    var nextTime: UInt64 { intendedTime(of: index) }

    /// Moves on to the next call.
    mutating func advance() { index &+= 1 }

    /// Latency in µs from the intended start (coordinated-omission corrected).
    static func correctedLatency(intended: UInt64, completed: UInt64) -> UInt64 {
        completed > intended ? (completed - intended) / 1000 : 0
    }

    /// Latency in µs from the actual send.
    static func uncorrectedLatency(sent: UInt64, completed: UInt64) -> UInt64 {
        completed > sent ? (completed - sent) / 1000 : 0
    }
}
