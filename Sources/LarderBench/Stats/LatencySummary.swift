/// What the reports read from a latency histogram, fine (the whole run) or coarse (a window).
protocol LatencySummary {
    /// How many latencies were recorded: none means no call was answered.
    var totalCount: UInt64 { get }
    /// The largest latency recorded, in microseconds.
    var max: UInt64 { get }
    /// The latency at `percentile` (0–100), in microseconds.
    func value(atPercentile percentile: Double) -> UInt64
}

extension LatencyHistogram: LatencySummary {}
extension CoarseHistogram: LatencySummary {}
