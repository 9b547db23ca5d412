public import LarderWire

/// A read handed to a `Store`: an operation and the completion that takes its result.
///
/// The result's type is erased here, in the generic initializer, which is `@inlinable` so
/// that it is specialized where the read is made. A store then queues and runs reads of every
/// type through one concrete type, and no call looks the metadata of a generic job type up in
/// the runtime (a hash-table lookup of ~330 instructions each time, a few per call).
public struct StoreRead: Sendable, SourcedJob {
    @usableFromInline let body: @Sendable (Result<any StoreReader, RPCError>) -> Void
    /// Who asked (a connection's id; 0: nobody in particular): readers serve sources in turn.
    public let source: UInt64

    /// A read that runs `operation` and passes what it returns or throws to `completion`.
    @inlinable
    public init<R: Sendable>(
        source: UInt64 = 0,
        _ operation: @escaping @Sendable (any StoreReader) throws(RPCError) -> R,
        completion: @escaping @Sendable (Result<R, RPCError>) -> Void
    ) {
        self.source = source
        body = { input in
            switch input {
            case .success(let reader):
                let result: Result<R, RPCError>
                do throws(RPCError) {
                    result = .success(try operation(reader))
                } catch {
                    result = .failure(error)
                }
                completion(result)
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    /// Runs the operation on `reader` (inside a read transaction) and completes the read.
    public func run(on reader: any StoreReader) { body(.success(reader)) }

    /// Completes the read with `error`, without running its operation.
    public func fail(_ error: RPCError) { body(.failure(error)) }
}
