import CLarderProto
import CProtobufC
import LarderWire

/// `larder.reflection.v1.DescribeTypeRequest`.
public struct DescribeTypeRequest: Hashable, Sendable {
    /// Full name of a message or enum type, e.g. `larder.v1.Location`.
    public var name: String
    public init(name: String) { self.name = name }
}

extension DescribeTypeRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__reflection__v1__describe_type_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        name = try CFields.string(message.cast(to: Larder__Reflection__V1__DescribeTypeRequest.self).pointee.name,
                                  field: "name")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__Reflection__V1__DescribeTypeRequest.self) {
            larder__reflection__v1__describe_type_request__init($0)
        }
        c.pointee.name = arena.string(name)
        return c.asMessage
    }
}

/// `larder.reflection.v1.DescribeTypeResponse`: a message type or an enum type.
public enum DescribeTypeResponse: Hashable, Sendable {
    case message(MessageType)
    case enumType(EnumType)
    /// Neither is set (a peer sent an empty reply).
    case none
}

extension DescribeTypeResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__reflection__v1__describe_type_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__Reflection__V1__DescribeTypeResponse.self).pointee
        switch c.type_case {
        case LARDER__REFLECTION__V1__DESCRIBE_TYPE_RESPONSE__TYPE_MESSAGE_TYPE:
            guard let type = c.message_type else { self = .none; return }
            self = .message(try MessageType(c: type))
        case LARDER__REFLECTION__V1__DESCRIBE_TYPE_RESPONSE__TYPE_ENUM_TYPE:
            guard let type = c.enum_type else { self = .none; return }
            self = .enumType(try EnumType(c: type))
        default:
            self = .none
        }
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__Reflection__V1__DescribeTypeResponse.self) {
            larder__reflection__v1__describe_type_response__init($0)
        }
        switch self {
        case .message(let type):
            c.pointee.type_case = LARDER__REFLECTION__V1__DESCRIBE_TYPE_RESPONSE__TYPE_MESSAGE_TYPE
            c.pointee.message_type = type.buildC(in: arena)
        case .enumType(let type):
            c.pointee.type_case = LARDER__REFLECTION__V1__DESCRIBE_TYPE_RESPONSE__TYPE_ENUM_TYPE
            c.pointee.enum_type = type.buildC(in: arena)
        case .none:
            break
        }
        return c.asMessage
    }
}

/// `larder.reflection.v1.MessageType`: a message's full name and fields by number.
public struct MessageType: Hashable, Sendable {
    public var name: String
    public var fields: [FieldInfo]
    /// True for the synthetic entry type of a map field.
    public var mapEntry: Bool

    public init(name: String, fields: [FieldInfo] = [], mapEntry: Bool = false) {
        self.name = name
        self.fields = fields
        self.mapEntry = mapEntry
    }

    init(c: UnsafePointer<Larder__Reflection__V1__MessageType>) throws(RPCError) {
        let c = c.pointee
        name = try CFields.string(c.name, field: "message_type.name")
        fields = try CFields.messages(c.fields, count: c.n_fields) { p throws(RPCError) in try FieldInfo(c: p) }
        mapEntry = c.map_entry != 0
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__Reflection__V1__MessageType> {
        let c = arena.message(Larder__Reflection__V1__MessageType.self) { larder__reflection__v1__message_type__init($0) }
        c.pointee.name = arena.string(name)
        c.pointee.n_fields = fields.count
        c.pointee.fields = arena.pointers(fields) { $0.buildC(in: arena) }
        c.pointee.map_entry = mapEntry ? 1 : 0
        return c
    }
}

/// `larder.reflection.v1.EnumType`: an enum's full name and values in declaration order.
public struct EnumType: Hashable, Sendable {
    public var name: String
    public var values: [EnumValueInfo]

    public init(name: String, values: [EnumValueInfo] = []) {
        self.name = name
        self.values = values
    }

    init(c: UnsafePointer<Larder__Reflection__V1__EnumType>) throws(RPCError) {
        let c = c.pointee
        name = try CFields.string(c.name, field: "enum_type.name")
        values = try CFields.messages(c.values, count: c.n_values) { p throws(RPCError) in
            EnumValueInfo(name: try CFields.string(p.pointee.name, field: "enum_value.name"), number: p.pointee.number)
        }
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__Reflection__V1__EnumType> {
        let c = arena.message(Larder__Reflection__V1__EnumType.self) { larder__reflection__v1__enum_type__init($0) }
        c.pointee.name = arena.string(name)
        c.pointee.n_values = values.count
        c.pointee.values = arena.pointers(values) { value in
            let v = arena.message(Larder__Reflection__V1__EnumValueInfo.self) {
                larder__reflection__v1__enum_value_info__init($0)
            }
            v.pointee.name = arena.string(value.name)
            v.pointee.number = value.number
            return v
        }
        return c
    }
}

/// `larder.reflection.v1.EnumValueInfo`.
public struct EnumValueInfo: Hashable, Sendable {
    public var name: String
    public var number: Int32
    public init(name: String, number: Int32) {
        self.name = name
        self.number = number
    }
}
