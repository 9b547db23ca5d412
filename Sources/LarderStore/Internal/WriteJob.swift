import LarderWire

/// A write queued with its completion; holds its result until the transaction ended.
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

    func fail(_ error: RPCError) {
        if case .failure = result { return }
        result = .failure(error)
    }

    func complete() {
        completion(result ?? .failure(.internalError("write was never run")))
    }
}
