import LarderWire

/// How the server runs one method: decodes the request from its payload,
/// runs it where it belongs, and produces the encoded response or the error.
struct MethodHandler: Sendable {
    typealias Respond = @Sendable (Result<[UInt8], RPCError>) -> Void

    /// Where a method runs.
    enum Execution: Sendable {
        /// On the event loop, answered at once: no database, microseconds (health, reflection).
        case inline(@Sendable (_ payload: [UInt8], _ context: CallContext) -> Result<[UInt8], RPCError>)
        /// On the store's threads; the handler calls `respond` exactly once, from any thread.
        case deferred(@Sendable (_ payload: [UInt8], _ context: CallContext, _ respond: @escaping Respond) -> Void)
    }

    let method: MethodDescriptor
    /// True for handlers that need no token even when auth is on (health).
    let isPublic: Bool
    /// The method's slot in `MetricsRecorder`, set once the router is complete.
    var metricsIndex = 0
    let execution: Execution

    init(method: MethodDescriptor, isPublic: Bool, execution: Execution) {
        self.method = method
        self.isPublic = isPublic
        self.execution = execution
    }
}
