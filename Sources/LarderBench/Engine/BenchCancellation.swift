import Synchronization

/// Asks a running bench to stop early (the first Ctrl-C): the load ends at the
/// next loop turn, creating data stops between batches, and what was created
/// is still deleted. Shared by the signal handler and the run.
public final class BenchCancellation: Sendable {
    private let requested = Atomic<Bool>(false)

    public init() {}

    /// Stops the run as soon as it can.
    public func cancel() { requested.store(true, ordering: .relaxed) }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { requested.load(ordering: .relaxed) }
}
