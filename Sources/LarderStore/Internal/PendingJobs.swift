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
    /// Marks the operation failed without running it (or after it ran).
    func fail(_ error: RPCError)
    /// Calls the completion with the operation's result.
    func complete()
}

final class ReadJob<R: Sendable>: PendingRead {
    private let operation: @Sendable (any StoreReader) throws(RPCError) -> R
    private let completion: @Sendable (Result<R, RPCError>) -> Void

    init(_ operation: @escaping @Sendable (any StoreReader) throws(RPCError) -> R,
         _ completion: @escaping @Sendable (Result<R, RPCError>) -> Void) {
        self.operation = operation
        self.completion = completion
    }

    func run(_ reader: any StoreReader) {
        let result: Result<R, RPCError>
        do throws(RPCError) {
            result = .success(try operation(reader))
        } catch {
            result = .failure(error)
        }
        completion(result)
    }

    func fail(_ error: RPCError) { completion(.failure(error)) }
}

final class WriteJob<R: Sendable>: PendingWrite {
    private let operation: @Sendable (any StoreWriter) throws(RPCError) -> R
    private let completion: @Sendable (Result<R, RPCError>) -> Void
    private var result: Result<R, RPCError>?

    init(_ operation: @escaping @Sendable (any StoreWriter) throws(RPCError) -> R,
         _ completion: @escaping @Sendable (Result<R, RPCError>) -> Void) {
        self.operation = operation
        self.completion = completion
    }

    func run(_ writer: any StoreWriter) -> Bool {
        do throws(RPCError) {
            result = .success(try operation(writer))
            return true
        } catch {
            result = .failure(error)
            return false
        }
    }

    func fail(_ error: RPCError) { result = .failure(error) }

    func complete() {
        completion(result ?? .failure(.internalError("write was never run")))
    }
}
