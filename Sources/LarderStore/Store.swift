import LarderAPI
public import LarderWire

/// A database holding Larder's data.
///
/// Reads run on a pool of reader connections; writes run on one writer that
/// coalesces concurrent writes into one transaction (group commit). Both call
/// `completion` on a store thread, never on the caller's.
public protocol Store: Sendable {
    /// Queues `read`, to run in a read transaction; its completion runs on a store thread.
    /// A store may run a `.point` read submitted inside `submitBatch` on the submitting
    /// thread, when the batch ends, instead of handing it to a reader thread (whose wake-up
    /// costs more than the read); its completion then runs on that thread, after
    /// `submitBatch`'s body. Every other read goes to a reader thread.
    func submit(_ read: StoreRead, cost: ReadCost)

    /// Queues `write`, to run in a write transaction, in a savepoint of its own so a failure
    /// undoes only its changes; it completes only after the transaction that holds it has
    /// committed (or failed).
    func submit(_ write: StoreWrite)

    /// Fails the work still queued (UNAVAILABLE, not run: no queued write is applied), lets the
    /// work running finish, then closes every connection. Idempotent.
    func close()

    /// Sets what is called after each completion delivered on its own (a read) and
    /// after each group of completions delivered back to back (the writes of one
    /// commit), on the thread that delivered them: where a receiver that queues
    /// results for another thread wakes it — once per group, not once per result.
    /// Set it before submitting work.
    func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void)

    /// Runs `body`, whose submissions wake the store threads once, when it returns.
    func submitBatch(_ body: () -> Void)

    /// True while the point reads of `submitBatch` keep a read transaction open for the
    /// next batch (SQLite), which the submitting thread ends with `releaseReadSnapshot()`
    /// before it sleeps. Cheap (an atomic load): checked on every turn of the event loop.
    var holdsReadSnapshot: Bool { get }

    /// Ends the read transaction `holdsReadSnapshot` reports, if any.
    func releaseReadSnapshot()

    /// False while the database cannot be reached or cannot take writes; health
    /// answers NOT_SERVING then. Cheap (an atomic load): called on the event loop.
    var isAvailable: Bool { get }
}

extension Store {
    /// Runs `operation` in a read transaction and passes its result to `completion`.
    @inlinable
    public func read<R: Sendable>(
        _ operation: @escaping @Sendable (any StoreReader) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        submit(StoreRead(operation, completion: completion), cost: .query)
    }

    /// `read(_:completion:)` for a read that costs `cost` (see `submit(_:cost:)`).
    @inlinable
    public func read<R: Sendable>(
        _ cost: ReadCost,
        _ operation: @escaping @Sendable (any StoreReader) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        submit(StoreRead(operation, completion: completion), cost: cost)
    }

    /// Runs `operation` in a write transaction (see `submit(_:)`) and passes its result to
    /// `completion` once the transaction ended; `deadline` as in `StoreWrite`.
    @inlinable
    public func write<R: Sendable>(
        deadline: UInt64? = nil,
        _ operation: @escaping @Sendable (any StoreWriter) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        submit(StoreWrite(deadline: deadline, operation, completion: completion))
    }

    public func submitBatch(_ body: () -> Void) { body() }
    public var holdsReadSnapshot: Bool { false }
    public func releaseReadSnapshot() {}
    /// A local database file is always there.
    public var isAvailable: Bool { true }
}
