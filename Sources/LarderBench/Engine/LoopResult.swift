/// What one load loop measured.
struct LoopResult: Sendable {
    /// Latency from the intended start (equal to the actual start in a closed loop).
    var latency = LatencyHistogram()
    /// Latency from the actual send; only filled in an open-loop run.
    var uncorrectedLatency = LatencyHistogram()
    /// Measured calls by status code number (OK included).
    var callsByCode: [Int32: Int] = [:]
    /// The first status message seen per failing code.
    var firstMessages: [Int32: String] = [:]
    /// Latency and errors per workload, for a mix.
    var byWorkload: [Workload: WorkloadStats] = [:]
    /// Calls lost with a failed connection (not in the histogram).
    var lostCalls = 0
    var unsentCalls = 0
    /// Why connections failed, once per connection.
    var connectionFailures: [String] = []
    /// Calls sent and completed over the whole run, warm-up included.
    var totalCalls = 0
    /// Calls still waiting for their reply when the load stopped.
    var unansweredCalls = 0
    /// Why a `--data` rendering stopped the run.
    var templateFailure: String?
    /// Ids of the records create calls made, and how many replies had none readable.
    var createdIDs: [String] = []
    var uncapturedCreates = 0
    /// Measured calls over time, and per load-schedule step.
    var timeline = TimeSeries(widthSeconds: 1)
    var steps: TimeSeries?
    /// Over HTTP/2: the fewest streams a server allowed a connection whose calls in flight were
    /// more, and how many calls were above their connection's limit (see `BenchResult`).
    var serverStreamLimit: Int?
    var callsAboveStreamLimit = 0
    /// Some loop stopped because every connection it owned was closed (stopping the run).
    var connectionsClosed = false
    /// When the loop stopped.
    var endedAt: UInt64 = 0
    /// CPU readings at the start and end of the measurement window (loop 0 only).
    var startSample: CPUSample?
    var endSample: CPUSample?

    /// Adds `other`'s counts (the samples stay).
    mutating func merge(_ other: LoopResult) {
        latency.merge(other.latency)
        uncorrectedLatency.merge(other.uncorrectedLatency)
        for (code, count) in other.callsByCode { callsByCode[code, default: 0] += count }
        for (code, message) in other.firstMessages where firstMessages[code] == nil { firstMessages[code] = message }
        for (workload, stats) in other.byWorkload { byWorkload[workload, default: WorkloadStats()].merge(stats) }
        lostCalls += other.lostCalls
        unsentCalls += other.unsentCalls
        connectionFailures += other.connectionFailures
        totalCalls += other.totalCalls
        unansweredCalls += other.unansweredCalls
        if templateFailure == nil { templateFailure = other.templateFailure }
        createdIDs += other.createdIDs
        uncapturedCreates += other.uncapturedCreates
        timeline.merge(other.timeline)
        if let otherSteps = other.steps {
            if steps == nil { steps = otherSteps } else { steps?.merge(otherSteps) }
        }
        if let limit = other.serverStreamLimit { serverStreamLimit = min(serverStreamLimit ?? limit, limit) }
        callsAboveStreamLimit += other.callsAboveStreamLimit
        connectionsClosed = connectionsClosed || other.connectionsClosed
        endedAt = max(endedAt, other.endedAt)
        if startSample == nil { startSample = other.startSample }
        if endSample == nil { endSample = other.endSample }
    }
}
