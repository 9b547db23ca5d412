import CProtobufC

/// The value type of a field, as protobuf-c knows it.
public enum FieldType: String, Sendable, Hashable, CaseIterable {
    case int32, sint32, sfixed32, int64, sint64, sfixed64
    case uint32, fixed32, uint64, fixed64
    case float, double, bool, `enum`, string, bytes, message

    init(_ type: ProtobufCType) {
        switch type {
        case PROTOBUF_C_TYPE_INT32: self = .int32
        case PROTOBUF_C_TYPE_SINT32: self = .sint32
        case PROTOBUF_C_TYPE_SFIXED32: self = .sfixed32
        case PROTOBUF_C_TYPE_INT64: self = .int64
        case PROTOBUF_C_TYPE_SINT64: self = .sint64
        case PROTOBUF_C_TYPE_SFIXED64: self = .sfixed64
        case PROTOBUF_C_TYPE_UINT32: self = .uint32
        case PROTOBUF_C_TYPE_FIXED32: self = .fixed32
        case PROTOBUF_C_TYPE_UINT64: self = .uint64
        case PROTOBUF_C_TYPE_FIXED64: self = .fixed64
        case PROTOBUF_C_TYPE_FLOAT: self = .float
        case PROTOBUF_C_TYPE_DOUBLE: self = .double
        case PROTOBUF_C_TYPE_BOOL: self = .bool
        case PROTOBUF_C_TYPE_ENUM: self = .enum
        case PROTOBUF_C_TYPE_STRING: self = .string
        case PROTOBUF_C_TYPE_BYTES: self = .bytes
        default: self = .message
        }
    }

    /// The type as written in a .proto file (`int32`, `string`); message and
    /// enum fields use their type name instead.
    public var protoName: String { rawValue }

    /// int64, uint64 and their variants: strings in the proto3 JSON mapping.
    public var is64Bit: Bool {
        switch self {
        case .int64, .sint64, .sfixed64, .uint64, .fixed64: true
        default: false
        }
    }
}
