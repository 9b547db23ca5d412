import Synchronization
/// The live progress line on a terminal's standard error: elapsed time,
/// calls/s over the last interval, and errors, redrawn in place.
/// Driven by load loop 0 only.
final class ProgressLine: @unchecked Sendable {
    // Sendable because it is touched only by the thread of loop 0 (it reads the others' atomics).
    private let loops: [LoopProgress]
    private let start: UInt64
    private let measureStart: UInt64
    private var lastDraw: UInt64 = 0
    private var lastCalls = 0
    private var drawn = false
    private static let interval: UInt64 = 250_000_000

    init(loops: [LoopProgress], start: UInt64, measureStart: UInt64) {
        self.loops = loops
        self.start = start
        self.measureStart = measureStart
        lastDraw = start
    }

    /// Redraws the line when an interval has passed.
    func tick(now: UInt64) {
        guard now >= lastDraw + Self.interval else { return }
        let calls = loops.reduce(0) { $0 + $1.calls.load(ordering: .relaxed) }
        let errors = loops.reduce(0) { $0 + $1.errors.load(ordering: .relaxed) }
        let rate = Double(calls - lastCalls) / (Double(now - lastDraw) / 1e9)
        let elapsed = Double(now - start) / 1e9
        let phase = now < measureStart ? "  (warm-up)" : ""
        StandardError.write("\r\u{1B}[K  \(Format.fixed(elapsed, digits: 1))s  "
            + "\(Format.grouped(Int(rate))) calls/s  \(Format.grouped(errors)) errors\(phase)")
        drawn = true
        lastDraw = now
        lastCalls = calls
    }

    /// Erases the line.
    func finish() {
        if drawn { StandardError.write("\r\u{1B}[K") }
    }
}
