/// What one workload of a mix measured.
public struct WorkloadStats: Sendable {
    /// Latency of its measured calls, in µs (from the intended start).
    public var latency = LatencyHistogram()
    /// Its measured calls that did not end OK.
    public var errors = 0

    public init() {}

    /// Measured calls.
    public var calls: Int { Int(latency.totalCount) }

    mutating func merge(_ other: WorkloadStats) {
        latency.merge(other.latency)
        errors += other.errors
    }
}
