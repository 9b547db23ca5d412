public import LarderWire

/// A write handed to a `Store`: an operation, the completion that takes its result, and the
/// result held in between (a write completes only once its transaction has ended).
///
/// As with `StoreRead`, the result's type is erased in the `@inlinable` initializer, so a
/// store queues writes of every type as one concrete type, with no runtime metadata lookups.
public struct StoreWrite: Sendable {
    @usableFromInline enum Step {
        case run(any StoreWriter)
        case fail(RPCError)
        case complete
    }

    @usableFromInline let body: @Sendable (Step) -> Bool
    /// Who asked (a connection's id; 0: nobody in particular): a source's writes are applied
    /// in the order they came, even when one waits for a lock another session holds.
    public let source: UInt64
    /// The call's deadline (`CLOCK_MONOTONIC` nanoseconds; nil = none). The database waits of a
    /// write transaction end at the latest deadline of all its writes, known before it begins
    /// (`StoreReader.boundWaits`): one call's deadline never cuts off the others'.
    public let deadline: UInt64?

    /// A write that runs `operation` and, once its transaction ended, passes what it returned
    /// or threw (or the error that failed the transaction) to `completion`. It may run more than
    /// once (a lock held it up): only the last run's result counts, and only a run whose
    /// transaction committed changed anything.
    @inlinable
    public init<R: Sendable>(
        source: UInt64 = 0, deadline: UInt64? = nil,
        _ operation: @escaping @Sendable (any StoreWriter) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        self.source = source
        self.deadline = deadline
        let outcome = StoreWriteOutcome<R>()
        body = { step in
            switch step {
            case .run(let writer):
                do throws(RPCError) {
                    outcome.result = .success(try operation(writer))
                    return true
                } catch {
                    outcome.result = .failure(error)
                    return false
                }
            case .fail(let error):
                if case .failure = outcome.result { return false }
                outcome.result = .failure(error)
                return false
            case .complete:
                completion(outcome.result ?? .failure(.internalError("write was never run")))
                return true
            }
        }
    }

    /// Runs the operation with `writer`, inside the write transaction; false when it threw
    /// (its changes must be undone).
    public func run(on writer: any StoreWriter) -> Bool { body(.run(writer)) }

    /// Marks the write failed with `error`: one not run yet, or one that ran and whose
    /// transaction then failed. A write that failed by itself keeps its own error.
    public func fail(_ error: RPCError) { _ = body(.fail(error)) }

    /// Passes the result to the completion. Call once, after the transaction ended.
    public func complete() { _ = body(.complete) }

    /// Completes a write that will not run (the store is closed, or has no database) with `error`.
    public func refuse(_ error: RPCError) {
        fail(error)
        complete()
    }
}

/// The result of a `StoreWrite` between running and completing.
@usableFromInline
final class StoreWriteOutcome<R: Sendable>: @unchecked Sendable {
    // Sendable because a write's steps run one after another, each handing the write to the
    // next thread through a queue's lock (the submitter, the writer), never at once.
    @usableFromInline var result: Result<R, RPCError>?

    @usableFromInline init() {}
}
