import LarderAPI
import LarderWire

/// `larder.reflection.v1.ServerReflection`, answered from the protobuf-c
/// descriptors of the served services and the types they use.
struct ReflectionService: Sendable {
    let catalog: DescriptorCatalog

    init(services: [ServiceDescriptor]) {
        catalog = DescriptorCatalog(services: services)
    }

    func listServices() -> ListServicesResponse {
        ListServicesResponse(services: catalog.services.map { service in
            ServiceInfo(name: service.name, methods: service.methods.map { method in
                let sides = APIStreamingMethods.all[method.path]
                return MethodInfo(name: method.name, fullName: method.path,
                                  inputType: method.input.name,
                                  outputType: method.output.name,
                                  clientStreaming: sides?.client ?? false,
                                  serverStreaming: sides?.server ?? false)
            })
        })
    }

    /// - Throws: INVALID_ARGUMENT for an empty name, NOT_FOUND for a type the server does not use.
    func describeType(_ name: String) throws(RPCError) -> DescribeTypeResponse {
        guard !name.isEmpty else { throw RPCError.invalidArgument("name: give a full type name such as larder.v1.Location") }
        if let message = catalog.message(named: name) {
            return DescribeTypeResponse(type: .messageType(MessageType(name: message.name, fields: message.fields.map(Self.info),
                                                                       mapEntry: message.isMapEntry)))
        }
        if let type = catalog.enumType(named: name) {
            return DescribeTypeResponse(type: .enumType(EnumType(name: type.name, values: type.values.map {
                EnumValueInfo(name: $0.name, number: $0.number)
            })))
        }
        throw RPCError.notFound("type \(SafeText.quoted(name)) is not used by any service this server serves")
    }

    static func info(_ field: FieldDescriptor) -> FieldInfo {
        let label: FieldInfo.Label = switch field.label {
        case .singular: .singular
        case .optional: .optional
        case .repeated: .repeated
        case .required: .required
        }
        return FieldInfo(
            name: field.name, jsonName: field.jsonName, number: Int32(bitPattern: field.number),
            type: valueType(field.type), label: label, typeName: field.typeName ?? "",
            inOneof: field.isOneofMember, mapKey: field.mapEntry.map { info($0.key) },
            mapValue: field.mapEntry.map { info($0.value) })
    }

    static func valueType(_ type: FieldType) -> FieldInfo.ValueType {
        switch type {
        case .int32: .int32
        case .sint32: .sint32
        case .sfixed32: .sfixed32
        case .int64: .int64
        case .sint64: .sint64
        case .sfixed64: .sfixed64
        case .uint32: .uint32
        case .fixed32: .fixed32
        case .uint64: .uint64
        case .fixed64: .fixed64
        case .float: .float
        case .double: .double
        case .bool: .bool
        case .enum: .enum
        case .string: .string
        case .bytes: .bytes
        case .message: .message
        }
    }
}
