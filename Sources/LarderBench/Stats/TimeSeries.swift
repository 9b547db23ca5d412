/// Measured calls in consecutive windows of equal length from the start of
/// the measured window: the throughput and latency over time, and the steps
/// of a load schedule.
public struct TimeSeries: Sendable, Equatable {
    /// One window.
    public struct Window: Sendable, Equatable {
        /// Calls that completed in the window, failed ones included.
        public var calls = 0
        /// Calls that did not end OK.
        public var errors = 0
        /// Their latency in µs (from the intended start under an open loop).
        public var latency = CoarseHistogram()

        public init() {}

        mutating func merge(_ other: Window) {
            calls += other.calls
            errors += other.errors
            latency.merge(other.latency)
        }
    }

    /// Nanoseconds per window.
    public let widthNanoseconds: UInt64
    /// The windows so far; the last may be partial.
    public private(set) var windows: [Window] = []
    /// At most this many windows are kept; later calls count in the last one.
    public static let maxWindows = 10_000

    public init(widthSeconds: Double) {
        widthNanoseconds = Swift.max(1_000_000, UInt64(widthSeconds * 1e9))
    }

    /// Seconds per window.
    public var widthSeconds: Double { Double(widthNanoseconds) / 1e9 }

    /// Records a call that completed `elapsed` nanoseconds into the measured window.
    mutating func record(elapsed: UInt64, latency: UInt64, failed: Bool) {
        let index = Swift.min(Int(elapsed / widthNanoseconds), Self.maxWindows - 1)
        if index >= windows.count { windows += Array(repeating: Window(), count: index + 1 - windows.count) }
        windows[index].calls += 1
        if failed { windows[index].errors += 1 }
        windows[index].latency.record(latency)
    }

    /// Adds `other`'s windows (same width).
    mutating func merge(_ other: TimeSeries) {
        if other.windows.count > windows.count {
            windows += Array(repeating: Window(), count: other.windows.count - windows.count)
        }
        for (index, window) in other.windows.enumerated() { windows[index].merge(window) }
    }

    /// Keeps the windows that start before `seconds` (drops an empty tail past the window's end).
    mutating func truncate(toSeconds seconds: Double) {
        let count = Int((seconds * 1e9 / Double(widthNanoseconds)).rounded(.up))
        if windows.count > count { windows.removeLast(windows.count - Swift.max(count, 0)) }
    }

    /// The same calls in windows `factor` times as wide.
    func merged(by factor: Int) -> TimeSeries {
        guard factor > 1 else { return self }
        var wider = TimeSeries(widthSeconds: widthSeconds * Double(factor))
        wider.windows = stride(from: 0, to: windows.count, by: factor).map { start in
            var window = Window()
            for index in start..<Swift.min(start + factor, windows.count) { window.merge(windows[index]) }
            return window
        }
        return wider
    }

    /// At most `count` windows: neighbours merged when there are more.
    func coarsened(toAtMost count: Int) -> TimeSeries {
        merged(by: (windows.count + count - 1) / Swift.max(count, 1))
    }

    /// The width for about 100 windows over `seconds`, rounded to 1-2-5 steps, at least 10 ms.
    static func chartWidth(forSeconds seconds: Double) -> Double {
        let raw = Swift.max(seconds / 100, 0.01)
        var decade = 0.01
        while true {
            for step in [1.0, 2.0, 5.0] where decade * step >= raw { return decade * step }
            decade *= 10
        }
    }
}
