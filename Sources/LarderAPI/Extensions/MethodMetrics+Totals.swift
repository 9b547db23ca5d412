extension MethodMetrics {
    /// Finished calls, all codes together.
    public var totalCalls: UInt64 { callsByCode.values.reduce(0, +) }
}
