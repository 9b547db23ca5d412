import LarderWire

/// How the server runs one method: decodes the request from its payload,
/// runs it wherever it belongs (loop, reader pool, writer) and reports the
/// encoded response or the error through `respond`, exactly once.
struct MethodHandler: Sendable {
    typealias Respond = @Sendable (Result<[UInt8], RPCError>) -> Void

    let method: MethodDescriptor
    /// True for handlers that need no token even when auth is on (health).
    let isPublic: Bool
    /// The method's slot in `MetricsRecorder`, set once the router is complete.
    var metricsIndex = 0
    let invoke: @Sendable (_ payload: [UInt8], _ context: CallContext, _ respond: @escaping Respond) -> Void
}
