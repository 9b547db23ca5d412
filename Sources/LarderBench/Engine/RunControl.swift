import LarderSystem
import Synchronization

/// The clock marks of a run and the state its loop threads share.
final class RunControl: Sendable {
    /// Monotonic nanoseconds when traffic starts.
    let start: UInt64
    /// Calls completing at or after this are measured.
    let measureStart: UInt64
    /// Calls completing at or after this are not measured; `UInt64.max` for a run by count.
    let measureEnd: UInt64
    /// No loop runs past this (the hard time cap).
    let hardEnd: UInt64
    /// Measured calls wanted, for a run by count.
    let requests: Int?
    /// Set to end the run early (count reached, or every connection lost).
    let stop = Atomic<Bool>(false)
    /// Calls measured so far, in a run by count.
    let measured = Atomic<Int>(0)
    /// Calls sent since the measuring began, in a run by count: no more than `requests` are.
    let sentWhileMeasuring = Atomic<Int>(0)
    /// When the last wanted call completed, in a run by count.
    let lastCompletion = Atomic<UInt64>(0)
    /// The number of the next `--call` request (`{{.RequestNumber}}`).
    let requestNumber = Atomic<Int>(0)
    /// Ctrl-C: ends the run at the next turn.
    let cancellation: BenchCancellation?

    init(start: UInt64, warmupSeconds: Double, durationSeconds: Double?, requests: Int?, timeLimitSeconds: Double,
         cancellation: BenchCancellation? = nil) {
        self.start = start
        self.cancellation = cancellation
        measureStart = start + MonotonicClock.nanoseconds(seconds: warmupSeconds)
        hardEnd = start + MonotonicClock.nanoseconds(seconds: timeLimitSeconds)
        if requests == nil, let durationSeconds {
            measureEnd = min(measureStart + MonotonicClock.nanoseconds(seconds: durationSeconds), hardEnd)
        } else {
            measureEnd = UInt64.max
        }
        self.requests = requests
    }

    /// Whether a run by count has sent all the calls it measures (no loop sends more).
    var sentAllRequests: Bool {
        guard let requests else { return false }
        return sentWhileMeasuring.load(ordering: .relaxed) >= requests
    }

    /// Whether the run was interrupted.
    var isCancelled: Bool { cancellation?.isCancelled == true }

    /// The time no loop goes past.
    var end: UInt64 { min(measureEnd, hardEnd) }
}

/// Counters a loop publishes once per turn for the progress line.
final class LoopProgress: Sendable {
    let calls = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
}
