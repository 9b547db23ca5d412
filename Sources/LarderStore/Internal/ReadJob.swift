import LarderWire

/// A read queued with its completion; completes as soon as it ran.
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
