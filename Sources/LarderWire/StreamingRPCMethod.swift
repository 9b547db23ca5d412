/// A typed method that streams requests, responses or both (`stream` in
/// proto/): its descriptor, the Swift message types and which side streams.
/// protobuf-c's method descriptors do not record streaming, so the generated
/// method tables (scripts/protoc-gen-larder-swift) pass it from proto/.
public struct StreamingRPCMethod<Request: ProtoMessage, Response: ProtoMessage>: Sendable {
    public let descriptor: MethodDescriptor
    /// The full method name used on the wire.
    public let path: String
    /// The client sends a stream of requests.
    public let isClientStreaming: Bool
    /// The server sends a stream of responses.
    public let isServerStreaming: Bool

    /// The method `name` of `service`. Traps, as `RPCMethod` does, if proto/
    /// has no such method or its types differ, and if neither side streams.
    public init(_ service: ServiceDescriptor, _ name: String, clientStreaming: Bool, serverStreaming: Bool) {
        precondition(clientStreaming || serverStreaming, "\(service.name)/\(name) streams on neither side: use RPCMethod")
        let method = RPCMethod<Request, Response>(service, name)
        self.descriptor = method.descriptor
        self.path = method.path
        self.isClientStreaming = clientStreaming
        self.isServerStreaming = serverStreaming
    }
}

extension StreamingRPCMethod {
    /// Which sides stream.
    public var sides: StreamingSides { StreamingSides(client: isClientStreaming, server: isServerStreaming) }
}

/// The sides of a method that stream (`stream` in proto/ before its request, its response or both).
public struct StreamingSides: Hashable, Sendable {
    /// The client sends a stream of requests.
    public let client: Bool
    /// The server sends a stream of responses.
    public let server: Bool

    public init(client: Bool, server: Bool) {
        self.client = client
        self.server = server
    }
}

extension RPCMethod {
    /// Always false: an `RPCMethod` is unary (streaming methods are `StreamingRPCMethod`s).
    public var isClientStreaming: Bool { false }
    /// Always false: an `RPCMethod` is unary (streaming methods are `StreamingRPCMethod`s).
    public var isServerStreaming: Bool { false }
}
