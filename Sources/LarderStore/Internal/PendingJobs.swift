import LarderWire

/// A queued read: runs on a reader thread and completes at once.
protocol PendingRead: AnyObject {
    func run(_ reader: any StoreReader)
    func fail(_ error: RPCError)
}

/// A queued write: runs inside the group transaction, completes after it ends.
protocol PendingWrite: AnyObject {
    /// Runs the operation; false when it threw (its savepoint must be rolled back).
    func run(_ writer: any StoreWriter) -> Bool
    /// Marks the operation failed with `error`: one not run yet, or one that ran and whose
    /// transaction then failed. An operation that failed by itself keeps its own error.
    func fail(_ error: RPCError)
    /// Calls the completion with the operation's result.
    func complete()
}
