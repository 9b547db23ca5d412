import CProtobufC

/// One method of a service descriptor.
public struct MethodDescriptor: Sendable {
    public let service: ServiceDescriptor
    public let index: Int

    private var method: ProtobufCMethodDescriptor { service.pointer.pointee.methods[index] }

    /// The short method name, e.g. `GetLocation`.
    public var name: String { String(cString: method.name) }

    /// The full method name used on the wire: `/larder.v1.LocationService/GetLocation`.
    public var path: String { "/\(service.name)/\(name)" }

    /// The descriptor of the request message.
    public var input: MessageDescriptor { MessageDescriptor(method.input) }

    /// The descriptor of the response message.
    public var output: MessageDescriptor { MessageDescriptor(method.output) }
}
