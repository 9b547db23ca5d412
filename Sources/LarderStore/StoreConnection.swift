public import LarderWire

/// One backend connection driven by `StoreExecutor`.
///
/// Each connection is used by exactly one executor thread at a time and is
/// therefore not `Sendable`. Readers only ever see `beginRead`/`endRead`;
/// the writer sees the write-transaction calls.
public protocol StoreConnection: AnyObject, StoreWriter {
    /// Starts a read transaction (a consistent snapshot).
    func beginRead() throws(RPCError)
    /// Ends the read transaction.
    func endRead() throws(RPCError)

    /// Starts a write transaction that holds the write lock from the start.
    func beginWrite() throws(RPCError)
    /// Opens a savepoint inside the write transaction.
    func savepoint() throws(RPCError)
    /// Releases (keeps) the changes since the last savepoint.
    func releaseSavepoint() throws(RPCError)
    /// Undoes the changes since the last savepoint and releases it.
    func rollbackToSavepoint() throws(RPCError)
    /// Commits the write transaction.
    func commit() throws(RPCError)
    /// Rolls the current transaction back, if any; never fails.
    func rollback()

    /// Releases the connection's resources. Called once, last.
    func close()

    /// True when a statement that fails is undone by itself and leaves the
    /// transaction usable (SQLite). The writer then runs each write of a batch
    /// without a savepoint, and needs one only for a write that fails after it
    /// changed rows. False (PostgreSQL: a failed statement aborts the whole
    /// transaction): every write gets its savepoint.
    var undoesFailedStatements: Bool { get }
    /// Rows changed by completed write statements so far; only differences matter.
    var changeCount: Int { get }
    /// True while a transaction is open (a backend may end one by itself on a
    /// severe error, such as a full disk).
    var isInTransaction: Bool { get }
    /// True (and cleared) when the last statement that failed gave up waiting for a lock
    /// another session holds (PostgreSQL's `lock_timeout`): the writer sets that write aside
    /// and tries it again later, instead of failing it, while the others go on.
    func takeLockWaitTimedOut() -> Bool
    /// True when a statement failed inside the current read transaction and the backend ended
    /// it for that (PostgreSQL: every later statement would fail with "current transaction is
    /// aborted"): the reader starts another for the rest of its batch.
    var readTransactionFailed: Bool { get }
}

extension StoreConnection {
    public func takeLockWaitTimedOut() -> Bool { false }
    public var readTransactionFailed: Bool { false }
    public var undoesFailedStatements: Bool { false }
    public var changeCount: Int { 0 }
    public var isInTransaction: Bool { true }
}
