import LarderSystem
public import LarderWire
import Synchronization

/// Runs store operations on threads it owns: a pool of readers, each with its
/// own connection, and one writer that commits queued writes together.
///
/// The writer takes every queued write (up to `maxWriteBatch`), opens one
/// transaction, runs the writes (a failed write leaves no trace: see
/// `runWriteBatch`), commits, calls every completion, and then announces them
/// once (`setCompletionsDelivered`). A failed commit fails every write of the
/// batch. Completions run on the store thread, so they must be quick and must
/// not call `close()`.
public final class StoreExecutor: @unchecked Sendable {
    // Sendable because: the queues and `completionsDelivered` are synchronized; `closed` is
    // guarded by `closeLock`; `threads` is written only in init; each connection (not Sendable)
    // is used by exactly one store thread, and closed in close() only after every thread joined.
    /// Tuning knobs.
    public struct Options: Sendable {
        /// The most writes committed in one transaction.
        public var maxWriteBatch: Int
        /// The most reads a reader takes per wake-up (one read transaction).
        public var maxReadBatch: Int

        public init(maxWriteBatch: Int = 512, maxReadBatch: Int = 32) {
            self.maxWriteBatch = max(1, maxWriteBatch)
            self.maxReadBatch = max(1, maxReadBatch)
        }
    }

    private let readQueue = JobQueue<any PendingRead>()
    private let writeQueue = JobQueue<any PendingWrite>()
    private let writer: any StoreConnection
    private let readers: [any StoreConnection]
    private let options: Options
    private var threads: [SystemThread] = []
    private let closeLock = ThreadCondition()
    private var closed = false
    /// Boxed: a function value read through `Mutex.withLock`'s inout access is re-abstracted
    /// and written back wrapped in thunks, one more pair per access.
    private final class Callback: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private let completionsDelivered = Mutex<Callback?>(nil)

    /// Starts one thread per reader connection and one for the writer.
    /// The executor owns the connections from now on and closes them in `close()`.
    public init(writer: any StoreConnection, readers: [any StoreConnection], options: Options = Options()) {
        precondition(!readers.isEmpty, "StoreExecutor needs at least one reader connection")
        self.writer = writer
        self.readers = readers
        self.options = options
        threads.append(SystemThread(name: "larder-writer") { [self] in writeLoop() })
        for index in readers.indices {
            threads.append(SystemThread(name: "larder-read-\(index)") { [self] in readLoop(self.readers[index]) })
        }
    }

    /// Queues a read; UNAVAILABLE once closed.
    public func read<R: Sendable>(
        _ operation: @escaping @Sendable (any StoreReader) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        if !readQueue.push(ReadJob(operation, completion)) {
            completion(.failure(Self.closedError))
            notifyDelivered()
        }
    }

    /// Queues a write; UNAVAILABLE once closed.
    public func write<R: Sendable>(
        _ operation: @escaping @Sendable (any StoreWriter) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        if !writeQueue.push(WriteJob(operation, completion)) {
            completion(.failure(Self.closedError))
            notifyDelivered()
        }
    }

    /// See `Store.setCompletionsDelivered(_:)`.
    public func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) {
        let callback = Callback(body)
        completionsDelivered.withLock { $0 = callback }
    }

    private func notifyDelivered() {
        completionsDelivered.withLock { $0 }?.body()
    }

    /// Runs `body`, which submits reads and writes, waking the store threads once
    /// at the end instead of at the first submission: on a busy core, a woken
    /// store thread would otherwise preempt the submitter and take one job at a time.
    public func submitBatch(_ body: () -> Void) {
        readQueue.hold()
        writeQueue.hold()
        body()
        writeQueue.release()
        readQueue.release()
    }

    /// Finishes every queued job, stops the threads, then closes the readers
    /// and last the writer. Idempotent; must not be called from a completion.
    public func close() {
        let first = closeLock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        readQueue.close()
        writeQueue.close()
        for thread in threads { thread.join() }
        for reader in readers { reader.close() }
        writer.close()
    }

    private static let closedError = RPCError.unavailable("the store is closed")

    private func readLoop(_ connection: any StoreConnection) {
        var batch: [any PendingRead] = []
        batch.reserveCapacity(options.maxReadBatch)
        while readQueue.take(max: options.maxReadBatch, into: &batch) {
            do throws(RPCError) {
                try connection.beginRead()
            } catch {
                for job in batch { job.fail(error) }
                notifyDelivered()
                batch.removeAll(keepingCapacity: true)
                continue
            }
            for job in batch {
                job.run(connection)
                notifyDelivered()
            }
            do throws(RPCError) {
                try connection.endRead()
            } catch {
                // The results were read already; a failed end only needs a reset.
                connection.rollback()
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    private func writeLoop() {
        var batch: [any PendingWrite] = []
        batch.reserveCapacity(options.maxWriteBatch)
        while writeQueue.take(max: options.maxWriteBatch, into: &batch) {
            if let error = runWriteBatch(batch) {
                for job in batch { job.fail(error) }
            }
            // Every caller of the commit is answered before anyone is woken for the answers.
            for job in batch { job.complete() }
            notifyDelivered()
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Runs `batch` in one transaction; returns the error that failed all of it.
    ///
    /// A write that fails must leave no trace while the others commit. With a
    /// backend that undoes failed statements by itself (SQLite), a write that
    /// fails before changing any row leaves none, so the batch first runs
    /// without savepoints (one savepoint per write costs a copy of every page it
    /// touches: ~18% of a create); only if a write fails after changing rows is
    /// the transaction rolled back and the batch run again, every write in its
    /// own savepoint. Nothing was acknowledged yet, so running again is safe.
    private func runWriteBatch(_ batch: [any PendingWrite]) -> RPCError? {
        if writer.undoesFailedStatements {
            switch runWriteBatchUnguarded(batch) {
            case .committed: return nil
            case .failed(let error): return error
            case .needsSavepoints: break
            }
        }
        return runWriteBatchWithSavepoints(batch)
    }

    private enum UnguardedOutcome {
        case committed
        case failed(RPCError)
        /// A write failed after changing rows: the transaction was rolled back.
        case needsSavepoints
    }

    private func runWriteBatchUnguarded(_ batch: [any PendingWrite]) -> UnguardedOutcome {
        let connection = writer
        do throws(RPCError) {
            try connection.beginWrite()
            for job in batch {
                let changesBefore = connection.changeCount
                if job.run(connection) { continue }
                guard connection.isInTransaction else {
                    throw RPCError.internalError("the database ended the transaction after an error")
                }
                if connection.changeCount != changesBefore {
                    connection.rollback()
                    return .needsSavepoints
                }
            }
            try connection.commit()
            return .committed
        } catch {
            connection.rollback()
            return .failed(error)
        }
    }

    private func runWriteBatchWithSavepoints(_ batch: [any PendingWrite]) -> RPCError? {
        let connection = writer
        do throws(RPCError) {
            try connection.beginWrite()
            for job in batch {
                try connection.savepoint()
                if job.run(connection) {
                    try connection.releaseSavepoint()
                } else {
                    try connection.rollbackToSavepoint()
                }
            }
            try connection.commit()
            return nil
        } catch {
            connection.rollback()
            return error
        }
    }
}
