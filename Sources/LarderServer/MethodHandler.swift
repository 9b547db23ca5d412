import LarderWire

/// How the server runs one method: decodes the request from its payload,
/// runs it where it belongs, and produces the encoded response or the error.
///
/// A class, so that looking one up per call costs one retain, not one per field.
final class MethodHandler: Sendable {
    typealias Respond = @Sendable (Result<[UInt8], RPCError>) -> Void

    /// Where a method runs.
    enum Execution: Sendable {
        /// On the event loop, answered at once: no database, microseconds (health, reflection).
        /// The encoded reply goes to `scratch.reply`; the error, if any, is returned.
        case inline(@Sendable (_ payload: UnsafeRawBufferPointer, _ scratch: CallScratch, _ context: CallContext)
            -> RPCError?)
        /// On the store's threads; the handler calls `respond` exactly once, from a store
        /// thread. The request is decoded (in the loop's `scratch`) before the handler
        /// returns; one that cannot be is not queued: the error is returned, and `respond`
        /// never called.
        case deferred(@Sendable (_ payload: UnsafeRawBufferPointer, _ scratch: CallScratch, _ context: CallContext,
                                 _ respond: @escaping Respond) -> RPCError?)
        /// Server streaming: one request (decoded before the handler returns, as for `deferred`),
        /// then any number of messages and a status through the `ServerStream`, from any thread.
        /// A request that cannot be decoded is refused by the returned error, the stream unused.
        case serverStreaming(@Sendable (_ payload: UnsafeRawBufferPointer, _ scratch: CallScratch,
                                        _ context: CallContext, _ stream: ServerStream) -> RPCError?)
        /// Bidirectional streaming: the handler returns the receiver of the client's messages
        /// (fed on the loop as they arrive, then half-closed) and answers through the stream.
        case bidirectional(@Sendable (_ context: CallContext, _ stream: ServerStream) -> any ClientStreamReceiver)
    }

    let method: MethodDescriptor
    /// The full method name, e.g. `/larder.v1.LocationService/GetLocation`.
    let path: String
    /// True for handlers that need no token even when auth is on (health).
    let isPublic: Bool
    /// The method's slot in `MetricsRecorder` (0 until the router assigns it).
    let metricsIndex: Int
    let execution: Execution

    /// The method's `grpc_type` in the metrics, as go-grpc-prometheus names it.
    var grpcType: String {
        switch execution {
        case .inline, .deferred: "unary"
        case .serverStreaming: "server_stream"
        case .bidirectional: "bidi_stream"
        }
    }

    init(method: MethodDescriptor, isPublic: Bool, metricsIndex: Int = 0, execution: Execution) {
        self.method = method
        self.path = method.path
        self.isPublic = isPublic
        self.metricsIndex = metricsIndex
        self.execution = execution
    }

    /// This handler, counted in metrics slot `index`.
    func withMetricsIndex(_ index: Int) -> MethodHandler {
        MethodHandler(method: method, isPublic: isPublic, metricsIndex: index, execution: execution)
    }
}
