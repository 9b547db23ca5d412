/// The arrival schedule of an open-loop run: with a constant rate call `k` is
/// intended to start at `start + k / rate`; under a `LoadSchedule` each gap is
/// `1 / rate(t)` at the time `t` of the call before, whether or not the server keeps up.
///
/// Latency is measured from the intended time (corrected for coordinated
/// omission, as wrk2 does), so a call that had to wait for a free slot
/// counts its wait; the uncorrected latency starts at the actual send.
struct RateSchedule: Sendable {
    /// Monotonic nanoseconds of call 0.
    let start: UInt64
    /// Nanoseconds between intended starts at a constant rate.
    let intervalNanoseconds: Double
    /// The ramp, its share for this loop, and the start of the measured window it counts from.
    private let ramp: (schedule: LoadSchedule, share: Double, origin: UInt64)?
    /// Nanoseconds after `start` of the next call, under a ramp.
    private var offset: Double = 0
    /// The next call to send.
    private(set) var index: UInt64 = 0

    /// `phase` (0 up to 1): how far into its first interval call 0 starts, so that loops sharing a
    /// rate interleave (loop `i` of `n` at `i / n`) instead of sending in bursts.
    init(ratePerSecond: Double, start: UInt64, phase: Double = 0) {
        precondition(ratePerSecond > 0 && ratePerSecond.isFinite, "rate must be positive")
        precondition(phase >= 0 && phase < 1, "phase must be in [0, 1)")
        intervalNanoseconds = 1e9 / ratePerSecond
        self.start = start &+ UInt64(phase * intervalNanoseconds)
        ramp = nil
    }

    /// A ramp of which this loop sends `share` (0-1) of the calls; `origin` is when the measured
    /// window starts; `phase` as for a constant rate, of the ramp's first interval.
    init(schedule: LoadSchedule, share: Double, start: UInt64, origin: UInt64, phase: Double = 0) {
        precondition(share > 0 && share <= 1, "share must be in (0, 1]")
        precondition(phase >= 0 && phase < 1, "phase must be in [0, 1)")
        self.start = start
        intervalNanoseconds = 1e9 / (schedule.start * share)
        ramp = (schedule, share, origin)
        offset = phase * intervalNanoseconds
    }

    /// The intended start of call `index` at a constant rate.
    func intendedTime(of index: UInt64) -> UInt64 {
        start &+ UInt64(Double(index) * intervalNanoseconds)
    }

    /// The intended start of the next call.
    var nextTime: UInt64 { ramp == nil ? intendedTime(of: index) : start &+ UInt64(offset) }

    /// Moves on to the next call.
    mutating func advance() {
        index &+= 1
        guard let ramp else { return }
        let now = Double(start) + offset
        let rate = ramp.schedule.rate(atSecond: (now - Double(ramp.origin)) / 1e9) * ramp.share
        offset += 1e9 / rate
    }

    /// Latency in µs from the intended start (coordinated-omission corrected).
    static func correctedLatency(intended: UInt64, completed: UInt64) -> UInt64 {
        completed > intended ? (completed - intended) / 1000 : 0
    }

    /// Latency in µs from the actual send.
    static func uncorrectedLatency(sent: UInt64, completed: UInt64) -> UInt64 {
        completed > sent ? (completed - sent) / 1000 : 0
    }
}
