import CLarderProto
import CProtobufC
import LarderWire

/// `larder.reflection.v1.ListServicesRequest`.
public struct ListServicesRequest: Hashable, Sendable, ProtoMessage {
    public init() {}

    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__reflection__v1__list_services_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        arena.message(Larder__Reflection__V1__ListServicesRequest.self) {
            larder__reflection__v1__list_services_request__init($0)
        }.asMessage
    }
}

/// `larder.reflection.v1.ListServicesResponse`: the served services, sorted by name.
public struct ListServicesResponse: Hashable, Sendable {
    public var services: [ServiceInfo]
    public init(services: [ServiceInfo] = []) { self.services = services }
}

extension ListServicesResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__reflection__v1__list_services_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__Reflection__V1__ListServicesResponse.self).pointee
        services = try CFields.messages(c.services, count: c.n_services) { p throws(RPCError) in try ServiceInfo(c: p) }
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__Reflection__V1__ListServicesResponse.self) {
            larder__reflection__v1__list_services_response__init($0)
        }
        c.pointee.n_services = services.count
        c.pointee.services = arena.pointers(services) { $0.buildC(in: arena) }
        return c.asMessage
    }
}

/// `larder.reflection.v1.ServiceInfo`: a service and its methods in declaration order.
public struct ServiceInfo: Hashable, Sendable {
    /// Full name, e.g. `larder.v1.LocationService`.
    public var name: String
    public var methods: [MethodInfo]

    public init(name: String, methods: [MethodInfo] = []) {
        self.name = name
        self.methods = methods
    }

    init(c: UnsafePointer<Larder__Reflection__V1__ServiceInfo>) throws(RPCError) {
        let c = c.pointee
        name = try CFields.string(c.name, field: "service.name")
        methods = try CFields.messages(c.methods, count: c.n_methods) { p throws(RPCError) in try MethodInfo(c: p) }
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__Reflection__V1__ServiceInfo> {
        let c = arena.message(Larder__Reflection__V1__ServiceInfo.self) { larder__reflection__v1__service_info__init($0) }
        c.pointee.name = arena.string(name)
        c.pointee.n_methods = methods.count
        c.pointee.methods = arena.pointers(methods) { $0.buildC(in: arena) }
        return c
    }
}

/// `larder.reflection.v1.MethodInfo`.
public struct MethodInfo: Hashable, Sendable {
    /// Short name, e.g. `GetLocation`.
    public var name: String
    /// The wire name, e.g. `/larder.v1.LocationService/GetLocation`.
    public var fullName: String
    /// Full name of the request message type.
    public var inputType: String
    /// Full name of the response message type.
    public var outputType: String

    public init(name: String, fullName: String, inputType: String, outputType: String) {
        self.name = name
        self.fullName = fullName
        self.inputType = inputType
        self.outputType = outputType
    }

    init(c: UnsafePointer<Larder__Reflection__V1__MethodInfo>) throws(RPCError) {
        let c = c.pointee
        name = try CFields.string(c.name, field: "method.name")
        fullName = try CFields.string(c.full_name, field: "method.full_name")
        inputType = try CFields.string(c.input_type, field: "method.input_type")
        outputType = try CFields.string(c.output_type, field: "method.output_type")
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__Reflection__V1__MethodInfo> {
        let c = arena.message(Larder__Reflection__V1__MethodInfo.self) { larder__reflection__v1__method_info__init($0) }
        c.pointee.name = arena.string(name)
        c.pointee.full_name = arena.string(fullName)
        c.pointee.input_type = arena.string(inputType)
        c.pointee.output_type = arena.string(outputType)
        return c
    }
}
