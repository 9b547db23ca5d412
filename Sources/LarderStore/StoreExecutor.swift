import LarderSystem
import LarderWire
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
///
/// With a `batchReader`, the point reads (`ReadCost.point`) submitted inside
/// `submitBatch` skip the readers: the thread that submitted them runs them
/// when the batch ends, in one read transaction on that connection, and their
/// completions run on that thread. A lookup by key costs a few microseconds; a
/// hand-off costs a reader's wake-up, a thread switch, and the submitter's
/// wake-up for the replies. That read transaction stays open for the next batch
/// (its begin and end cost more than a lookup: two lock calls on the WAL index) and
/// is renewed there if the writer committed since; it ends when a batch ends after
/// a commit, after `maxHeldReadBatches` batches, and when the submitter is about to
/// sleep (`releaseReadSnapshot()`), so it never holds back the WAL's checkpoints.
public final class StoreExecutor: @unchecked Sendable {
    // Sendable because: the queues and `completionsDelivered` are synchronized; `closed` is
    // guarded by `closeLock`; `threads` is written only in init; each connection (not Sendable)
    // is used by exactly one store thread, and closed in close() only after every thread joined.
    // `batchReader` is used only with `batchReaderLock` held (`batchReaderClosed` likewise);
    // `batchReads` only by the thread `batchOwner` names: it claims them (acquiring) and hands
    // them back (releasing). `heldReadSince` is written with `batchReaderLock` held and read
    // without it as a hint, checked again under the lock.

    /// The most reads of one source (connection) a reader takes in one batch.
    static let readsPerSourceInBatch = 8

    /// Tuning knobs.
    public struct Options: Sendable {
        /// The most writes committed in one transaction.
        public var maxWriteBatch: Int
        /// The most reads a reader takes per wake-up (one read transaction).
        public var maxReadBatch: Int
        /// The most point reads one `submitBatch` runs on its own thread; further ones go
        /// to the readers. Bounds how long the submitter (the event loop) is busy with them.
        public var maxBatchPointReads: Int
        /// The most batches that share one read transaction of the batch reader while
        /// nothing commits: bounds how long a change made to the database by anyone but
        /// this executor's writer stays unseen under a steady load (1: one per batch).
        public var maxHeldReadBatches: Int
        /// How long in all a write may wait for locks other sessions hold (each try bounded by
        /// the writer connection's short lock wait, see `takeLockWaitTimedOut`) before it fails.
        public var lockWaitLimitNanoseconds: UInt64

        public init(maxWriteBatch: Int = 512, maxReadBatch: Int = 32, maxBatchPointReads: Int = 64,
                    maxHeldReadBatches: Int = 64, lockWaitLimitNanoseconds: UInt64 = 9_000_000_000) {
            self.lockWaitLimitNanoseconds = lockWaitLimitNanoseconds
            self.maxWriteBatch = max(1, maxWriteBatch)
            self.maxReadBatch = max(1, maxReadBatch)
            self.maxBatchPointReads = max(1, maxBatchPointReads)
            self.maxHeldReadBatches = max(1, maxHeldReadBatches)
        }
    }

    /// Reads, each connection's in turn (a connection with many slow reads queued does not hold
    /// up another's); writes first come, first served (a commit takes up to 512 of them at once).
    private let readQueue = JobQueue(RoundRobinBacklog<StoreRead>(perSourceBatch: StoreExecutor.readsPerSourceInBatch))
    private let writeQueue = JobQueue(FIFOBacklog<StoreWrite>(capacity: 1024))
    private let writer: any StoreConnection
    private let readers: [any StoreConnection]
    private let options: Options
    private var threads: [SystemThread] = []
    private let closeLock = ThreadCondition()
    private var closed = false
    /// Boxed: a function value read through `LockedValue.withLock`'s inout access is re-abstracted
    /// and written back wrapped in thunks, one more pair per access.
    private final class Callback: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private let completionsDelivered = LockedValue<Callback?>(nil)

    /// The connection the point reads of a batch run on (see the type's comment); nil: none do.
    private let batchReader: (any StoreConnection)?
    private let batchReaderLock = ThreadCondition()
    private var batchReaderClosed = false
    /// The thread inside the outermost `submitBatch` that collects point reads, if any.
    private let batchOwner = ThreadOwner()
    /// The point reads collected by the owner, run when its outermost `submitBatch` returns.
    private var batchReads: [StoreRead] = []
    /// Commits attempted by the writer, counted from 1; a read transaction begun after the
    /// count was `n` sees everything committed up to the `n`th.
    private let writerCommits = Atomic<UInt64>(1)
    /// The `writerCommits` value loaded before the batch reader's open read transaction
    /// began; 0 when none is open.
    private let heldReadSince = Atomic<UInt64>(0)
    /// Batches that used the open read transaction (with `batchReaderLock` held).
    private var heldReadBatches = 0

    /// Starts one thread per reader connection and one for the writer; `batchReader`, when
    /// given, runs the point reads of `submitBatch` on the submitting thread.
    /// The executor owns the connections from now on and closes them in `close()`.
    public init(writer: any StoreConnection, readers: [any StoreConnection],
                batchReader: (any StoreConnection)? = nil, options: Options = Options()) {
        precondition(!readers.isEmpty, "StoreExecutor needs at least one reader connection")
        self.writer = writer
        self.readers = readers
        self.batchReader = batchReader
        self.options = options
        batchReads.reserveCapacity(options.maxBatchPointReads)
        threads.append(SystemThread(name: "larder-writer") { [self] in writeLoop() })
        for index in readers.indices {
            threads.append(SystemThread(name: "larder-read-\(index)") { [self] in readLoop(self.readers[index]) })
        }
    }

    /// Queues a read (see `Store.submit(_:cost:)`): a point read submitted inside
    /// `submitBatch` (with a `batchReader`) is kept for the submitting thread to run when the
    /// batch ends; any other goes to the readers. UNAVAILABLE once closed.
    public func submit(_ read: StoreRead, cost: ReadCost) {
        if cost == .point && ownsBatch && batchReads.count < options.maxBatchPointReads {
            batchReads.append(read)
            return
        }
        if !readQueue.push(read) {
            read.fail(Self.closedError)
            notifyDelivered()
        }
    }

    /// Queues a write; UNAVAILABLE once closed.
    public func submit(_ write: StoreWrite) {
        if !writeQueue.push(write) {
            write.refuse(Self.closedError)
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
    ///
    /// The point reads submitted by `body` (see `submit(_:cost:)`) run when the
    /// outermost `submitBatch` of this thread returns, after the store threads were woken.
    public func submitBatch(_ body: () -> Void) {
        let collects = beginCollecting()
        readQueue.hold()
        writeQueue.hold()
        body()
        writeQueue.release()
        readQueue.release()
        if collects { endCollecting() }
    }

    /// True on the thread collecting point reads.
    private var ownsBatch: Bool {
        batchOwner.isCurrentThread
    }

    /// Makes this thread the one collecting point reads: true in its outermost `submitBatch`;
    /// false in a nested one (it collects already), while another thread collects, or
    /// without a batch reader.
    private func beginCollecting() -> Bool {
        guard batchReader != nil, !ownsBatch else { return false }
        return batchOwner.claim()
    }

    /// Ends the outermost batch: runs the collected point reads, or, with none, ends a
    /// held read transaction that a commit made stale (it would hold back checkpoints).
    private func endCollecting() {
        var reads: [StoreRead] = []
        swap(&reads, &batchReads)
        // Reads their completions submit go to the readers.
        batchOwner.release()
        if !reads.isEmpty {
            runBatchReads(reads)
        } else if heldReadIsStale {
            releaseReadSnapshot()
        }
    }

    private var heldReadIsStale: Bool {
        let since = heldReadSince.load(ordering: .relaxed)
        return since != 0 && since != writerCommits.load(ordering: .relaxed)
    }

    private func runBatchReads(_ reads: [StoreRead]) {
        batchReaderLock.withLock {
            guard let batchReader, !batchReaderClosed else {
                for job in reads { job.fail(Self.closedError) }
                return
            }
            let commits = writerCommits.load(ordering: .acquiring)
            // A transaction begun before the last commit, or shared long enough, is renewed.
            if heldReadSince.load(ordering: .relaxed) != commits || heldReadBatches >= options.maxHeldReadBatches
                || !batchReader.isInTransaction {
                endHeldRead(on: batchReader)
            }
            if heldReadSince.load(ordering: .relaxed) == 0 {
                do throws(RPCError) {
                    try batchReader.beginRead()
                } catch {
                    for job in reads { job.fail(error) }
                    return
                }
                heldReadSince.store(commits, ordering: .relaxed)
                heldReadBatches = 0
            }
            for job in reads { job.run(on: batchReader) }
            heldReadBatches += 1
        }
        notifyDelivered()
    }

    /// True while the batch reader keeps a read transaction open between batches, which
    /// `releaseReadSnapshot()` ends. An atomic load.
    public var holdsReadSnapshot: Bool { heldReadSince.load(ordering: .relaxed) != 0 }

    /// Ends the batch reader's held read transaction, if any. The thread that submits
    /// batches calls it before it sleeps: a snapshot kept while nothing runs would keep
    /// the checkpoints from finishing and the WAL from starting over.
    public func releaseReadSnapshot() {
        batchReaderLock.withLock {
            guard let batchReader, !batchReaderClosed else { return }
            endHeldRead(on: batchReader)
        }
    }

    /// Ends the held read transaction, if one is open. With `batchReaderLock` held.
    private func endHeldRead(on connection: any StoreConnection) {
        guard heldReadSince.load(ordering: .relaxed) != 0 else { return }
        Self.endRead(on: connection)
        heldReadSince.store(0, ordering: .relaxed)
    }

    /// Ends a read transaction; the results were read already, so a failed end only needs a reset.
    private static func endRead(on connection: any StoreConnection) {
        do throws(RPCError) {
            try connection.endRead()
        } catch {
            connection.rollback()
        }
    }

    /// Fails the jobs still queued (UNAVAILABLE: none of them ran, so no write among them was
    /// applied), lets each thread finish the batch it runs, stops the threads, then closes the
    /// readers and last the writer. Idempotent; must not be called from a completion.
    ///
    /// Not running what is queued bounds how long a stop takes: a server stopped at its drain
    /// timeout with 98,811 summaries queued ran them all first (measured: still running 40 s later).
    public func close() {
        let first = closeLock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        let reads = readQueue.close()
        let writes = writeQueue.close()
        for job in reads { job.fail(Self.closedError) }
        for job in writes { job.refuse(Self.closedError) }
        if !reads.isEmpty || !writes.isEmpty { notifyDelivered() }
        for thread in threads { thread.join() }
        batchReaderLock.withLock {
            if let batchReader { endHeldRead(on: batchReader) }
            batchReaderClosed = true
            batchReader?.close()
        }
        for reader in readers { reader.close() }
        writer.close()
    }

    private static let closedError = RPCError.unavailable("the store is closed")

    private func readLoop(_ connection: any StoreConnection) {
        var batch: [StoreRead] = []
        batch.reserveCapacity(options.maxReadBatch)
        while readQueue.take(max: options.maxReadBatch, into: &batch) {
            runReads(batch, on: connection)
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Runs `batch` in one read transaction on `connection`, announcing each completion
    /// as it is made (a caller need not wait for the rest).
    private func runReads(_ batch: [StoreRead], on connection: any StoreConnection) {
        do throws(RPCError) {
            try connection.beginRead()
        } catch {
            for job in batch { job.fail(error) }
            notifyDelivered()
            return
        }
        for (index, job) in batch.enumerated() {
            job.run(on: connection)
            notifyDelivered()
            // A read whose statement failed (a table lock's timeout) ended the transaction: the
            // rest of the batch gets a new one, instead of failing for that read's sake.
            if connection.readTransactionFailed && index + 1 < batch.count {
                connection.rollback()
                do throws(RPCError) {
                    try connection.beginRead()
                } catch {
                    for rest in batch[(index + 1)...] { rest.fail(error) }
                    notifyDelivered()
                    return
                }
            }
        }
        Self.endRead(on: connection)
    }

    private func writeLoop() {
        var taken: [StoreWrite] = []
        taken.reserveCapacity(options.maxWriteBatch)
        var waiting = LockWaitingWrites(limit: options.lockWaitLimitNanoseconds)
        while writeQueue.take(max: options.maxWriteBatch, into: &taken,
                              waitingAtMost: waiting.nanosecondsUntilDue(now: MonotonicClock.nanoseconds())) {
            let now = MonotonicClock.nanoseconds()
            // Writes a lock held up, when due, run first (they came first), except those that
            // have waited long enough: they fail untried. A new write of a source with one still
            // waiting waits behind it.
            let (expired, retried) = waiting.takeIfDue(now: now, max: options.maxWriteBatch)
            if !expired.isEmpty {
                let error = RPCError.unavailable("the database is busy, try again: a lock another session holds kept "
                    + "this write (or one before it on this connection) waiting \(options.lockWaitLimitNanoseconds / 1_000_000) "
                    + "ms in all (lock timeout), so it was not applied")
                for entry in expired {
                    entry.job.fail(error)  // one that was tried keeps its own lock timeout
                    entry.job.complete()
                }
                notifyDelivered()
            }
            var batch = retried
            for job in taken {
                if waiting.holds(source: job.source) {
                    waiting.append(job, now: now)
                } else {
                    batch.append(LockWaitingWrites.Entry(job: job, waitingSince: nil))
                }
            }
            taken.removeAll(keepingCapacity: true)
            guard !batch.isEmpty else { continue }
            let outcome = runWriteBatch(batch, now: now)
            // Before any caller hears of the commit: a read it sends next must not be answered
            // from a snapshot older than its write (see `runBatchReads`).
            writerCommits.add(1, ordering: .releasing)
            var answered = batch.indices.map { _ in true }
            var setAside: [LockWaitingWrites.Entry] = []
            if outcome.error == nil {
                // (When the transaction failed, the writes set aside fail with it: the writes of
                // their connections before them in it failed, and none may land after those.)
                for aside in outcome.setAside {
                    answered[aside.index] = false
                    var entry = batch[aside.index]
                    entry.waitingSince = entry.waitingSince ?? now
                    if aside.tried { entry.tries += 1 }
                    setAside.append(entry)
                }
            }
            waiting.setAside(setAside, round: !retried.isEmpty, blockedAgain: outcome.blockedAgain,
                             now: MonotonicClock.nanoseconds())
            for (index, entry) in batch.enumerated() where answered[index] {
                if let error = outcome.error { entry.job.fail(error) }
                // Every caller of the commit is answered before anyone is woken for the answers.
                entry.job.complete()
            }
            notifyDelivered()
        }
        let left = waiting.removeAll()
        for job in left { job.refuse(Self.closedError) }
        if !left.isEmpty { notifyDelivered() }
    }

    /// What running a batch came to: the error that failed all of it, the writes set aside
    /// (by index, in batch order; `tried`: it ran and found a lock taken, else it was not run),
    /// and whether a write that had waited already found a lock taken again.
    private struct BatchOutcome {
        struct SetAside { let index: Int; let tried: Bool }
        var error: RPCError?
        var setAside: [SetAside] = []
        var blockedAgain = false
    }

    /// The most lock timeouts one batch waits out (100 ms each on PostgreSQL): past them, the
    /// rest of the batch is set aside untried for the next round, so writes blocked on locks
    /// cost the other writes at most this many waits a round, however many there are.
    static let lockTimeoutsPerBatch = 2

    /// Runs `batch` in one transaction; returns the error that failed all of it, and the writes
    /// set aside because a lock another session holds stopped them (not run: see
    /// `LockWaitingWrites`), with every later write of their sources.
    ///
    /// A write that fails must leave no trace while the others commit. With a
    /// backend that undoes failed statements by itself (SQLite), a write that
    /// fails before changing any row leaves none, so the batch first runs
    /// without savepoints (one savepoint per write costs a copy of every page it
    /// touches: ~18% of a create); only if a write fails after changing rows is
    /// the transaction rolled back and the batch run again, every write in its
    /// own savepoint. Nothing was acknowledged yet, so running again is safe.
    private func runWriteBatch(_ batch: [LockWaitingWrites.Entry], now: UInt64) -> BatchOutcome {
        if writer.undoesFailedStatements {
            switch runWriteBatchUnguarded(batch) {
            case .committed: return BatchOutcome()
            case .failed(let error): return BatchOutcome(error: error)
            case .needsSavepoints: break
            }
        }
        return runWriteBatchWithSavepoints(batch, now: now)
    }

    private enum UnguardedOutcome {
        case committed
        case failed(RPCError)
        /// A write failed after changing rows: the transaction was rolled back.
        case needsSavepoints
    }

    private func runWriteBatchUnguarded(_ batch: [LockWaitingWrites.Entry]) -> UnguardedOutcome {
        let connection = writer
        do throws(RPCError) {
            try beginWrite(batch)
            for entry in batch {
                let job = entry.job
                let changesBefore = connection.changeCount
                if job.run(on: connection) { continue }
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

    /// Begins the write transaction of `batch`. Its waits are bounded by the latest deadline of
    /// its writes (none if one has none), set before its first statement: bounded by the writes
    /// run so far, one write's short deadline closed the connection under the next write's
    /// SAVEPOINT and failed every write of the batch (audit 37 M1). A deadline already passed
    /// does not count: its write is refused without a statement (the router checks it first),
    /// and a batch of only such writes would otherwise close the connection at its BEGIN.
    private func beginWrite(_ batch: [LockWaitingWrites.Entry]) throws(RPCError) {
        try writer.beginWrite()
        let now = MonotonicClock.nanoseconds()
        for entry in batch where entry.job.deadline.map({ $0 > now }) ?? true {
            writer.boundWaits(byDeadline: entry.job.deadline)
        }
    }

    private func runWriteBatchWithSavepoints(_ batch: [LockWaitingWrites.Entry], now: UInt64) -> BatchOutcome {
        let connection = writer
        var outcome = BatchOutcome()
        /// Sources with a write set aside in this batch: their later writes wait behind it.
        var heldSources: Set<UInt64> = []
        var lockTimeouts = 0
        do throws(RPCError) {
            try beginWrite(batch)
            for (index, entry) in batch.enumerated() {
                let source = entry.job.source
                if lockTimeouts >= Self.lockTimeoutsPerBatch || (source != 0 && heldSources.contains(source)) {
                    outcome.setAside.append(.init(index: index, tried: false))
                    if source != 0 { heldSources.insert(source) }
                    continue
                }
                try connection.savepoint()
                if entry.job.run(on: connection) {
                    try connection.releaseSavepoint()
                    continue
                }
                try connection.rollbackToSavepoint()
                // Held up by another session's lock: tried again later (nothing of it stayed),
                // unless it has waited long enough in all; then its lock timeout is its answer.
                guard connection.takeLockWaitTimedOut() else { continue }
                lockTimeouts += 1
                if entry.waitingSince != nil { outcome.blockedAgain = true }
                if MonotonicClock.nanoseconds() &- (entry.waitingSince ?? now) < options.lockWaitLimitNanoseconds {
                    outcome.setAside.append(.init(index: index, tried: true))
                    if source != 0 { heldSources.insert(source) }
                }
            }
            try connection.commit()
            return outcome
        } catch {
            connection.rollback()
            outcome.error = error
            return outcome
        }
    }
}
