/// A typed method: its descriptor plus the Swift request and response types,
/// checked against the descriptor's input and output types.
public struct RPCMethod<Request: ProtoMessage, Response: ProtoMessage>: Sendable {
    public let descriptor: MethodDescriptor
    /// The full method name used on the wire.
    public let path: String

    /// The method `name` of `service`. Traps if proto/ has no such method or
    /// its types differ from `Request`/`Response`: a build that drifted from
    /// proto/ must not start.
    public init(_ service: ServiceDescriptor, _ name: String) {
        guard let method = service.method(named: name) else {
            preconditionFailure("\(service.name) has no method \(name) in proto/")
        }
        precondition(method.input == Request.descriptor,
                     "\(method.path) takes \(method.input.name), not \(Request.protoName)")
        precondition(method.output == Response.descriptor,
                     "\(method.path) returns \(method.output.name), not \(Response.protoName)")
        self.descriptor = method
        self.path = method.path
    }
}
