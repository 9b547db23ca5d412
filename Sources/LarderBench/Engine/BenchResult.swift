public import LarderWire

/// What a bench run measured.
public struct BenchResult: Sendable {
    /// The options the run used.
    public var options: BenchOptions
    /// Seconds of the measurement window.
    public var seconds: Double
    /// Latency in µs, from the intended start (corrected for coordinated omission under `--rate`).
    public var latency: LatencyHistogram
    /// Latency in µs from the actual send; only for an open-loop (`--rate`) run.
    public var uncorrectedLatency: LatencyHistogram?
    /// Latency and errors per workload; only for a mix of several.
    public var byWorkload: [Workload: WorkloadStats]
    /// Measured calls by status (OK included).
    public var callsByCode: [StatusCode: Int]
    /// The first status message seen for each failing code.
    public var firstMessages: [StatusCode: String]
    /// Calls in flight on connections that failed (counted apart from `calls`).
    public var lostCalls: Int
    /// Open loop (`--rate`, ramps): calls the schedule meant to start inside the window that were
    /// never sent, every `--concurrency` slot waiting for a reply (the server slower than the
    /// rate asked). They are in no latency: the percentiles describe the calls that were sent.
    public var unsentCalls = 0
    /// Why connections failed, escaped (`SafeText.escaped`): they may quote what a server sent.
    public var connectionFailures: [String]
    /// This process's CPU seconds over the measurement window.
    public var benchCPUSeconds: Double
    /// The server's CPU seconds over the window, when `--server-pid` was given and readable.
    public var serverCPUSeconds: Double?
    /// Seconds between the two CPU readings.
    public var cpuWindowSeconds: Double
    /// What was created before the run, e.g. `1000 locations`.
    public var seeded: [String]
    /// Measured calls in windows of equal length (the charts of the HTML report).
    public var timeline = TimeSeries(widthSeconds: 1)
    /// Measured calls per step of `--load-schedule`.
    public var steps: TimeSeries?
    /// Ctrl-C ended the run early.
    public var interrupted = false
    /// Why the run stopped short: a `--data` rendering failed, or a run by count
    /// reached `--time-limit` before its calls were answered. Nil for a run that ended as asked.
    public var stopReason: String?
    /// Ids of the meal records the create workload made, and how many of its replies had none readable.
    var createdMealIDs: [String] = []
    var uncapturedCreates = 0
    /// What happened to the data the run created (nil when it created none).
    public var cleanup: CleanupReport?
    /// `--tls`: what the load connections' handshakes negotiated; nil in cleartext.
    public var tls: TLSSummary?
    /// Over HTTP/2: the fewest streams a connection's server allowed at once (its
    /// SETTINGS_MAX_CONCURRENT_STREAMS), when that was below what the connection had in flight.
    public var serverStreamLimit: Int?
    /// Of the calls in flight, how many were above their connection's stream limit: they waited
    /// in the bench for a stream, and that wait is in their latency.
    public var callsAboveStreamLimit = 0

    /// Measured calls, failed ones included.
    public var calls: Int { callsByCode.values.reduce(0, +) }
    /// Measured calls that did not end OK.
    public var errors: Int { callsByCode.filter { $0.key != .ok }.values.reduce(0, +) }
    /// Calls per second over the window.
    public var callsPerSecond: Double { seconds > 0 ? Double(calls) / seconds : 0 }
    /// Bench CPU µs per measured call: the cost of the load generator itself.
    public var benchCPUMicrosecondsPerCall: Double? {
        calls > 0 ? benchCPUSeconds * 1e6 / Double(calls) : nil
    }
    /// Bench CPU in % of one core.
    public var benchCPUPercent: Double { cpuWindowSeconds > 0 ? benchCPUSeconds * 100 / cpuWindowSeconds : 0 }
    /// Server CPU in % of one core.
    public var serverCPUPercent: Double? {
        guard let serverCPUSeconds, cpuWindowSeconds > 0 else { return nil }
        return serverCPUSeconds * 100 / cpuWindowSeconds
    }
    /// Server CPU µs per measured call.
    public var serverCPUMicrosecondsPerCall: Double? {
        guard let serverCPUSeconds, calls > 0 else { return nil }
        return serverCPUSeconds * 1e6 / Double(calls)
    }
}
