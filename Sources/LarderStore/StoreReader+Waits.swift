/// Defaults for backends whose waits need no bound: a local file answers, or fails, at once.
extension StoreReader {
    public func boundWaits(byDeadline deadline: UInt64?) {}
}
