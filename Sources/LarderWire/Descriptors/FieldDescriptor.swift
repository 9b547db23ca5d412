package import CProtobufC

/// One field of a protobuf-c message descriptor.
public struct FieldDescriptor: Hashable, Sendable {
    /// The message that declares the field.
    public let message: MessageDescriptor
    /// The position in `message.fields` (by number).
    public let index: Int

    public init(message: MessageDescriptor, index: Int) {
        self.message = message
        self.index = index
    }

    /// The raw C descriptor.
    package var raw: ProtobufCFieldDescriptor { message.pointer.pointee.fields[index] }

    /// The name as written in the .proto file, e.g. `color_hex`.
    public var name: String { String(cString: raw.name) }

    /// The proto3 JSON name: lowerCamelCase of `name`, e.g. `colorHex`.
    public var jsonName: String { Self.jsonName(name) }

    /// The field number (tag).
    public var number: UInt32 { raw.id }

    public var label: FieldLabel { FieldLabel(raw.label) }

    public var type: FieldType { FieldType(raw.type) }

    /// True for a member of a oneof (its quantifier is the oneof's case).
    public var isOneofMember: Bool { raw.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0 }

    /// The message type of a `.message` field.
    public var messageType: MessageDescriptor? {
        guard type == .message, let pointer = raw.descriptor else { return nil }
        return MessageDescriptor(pointer.assumingMemoryBound(to: ProtobufCMessageDescriptor.self))
    }

    /// The enum type of an `.enum` field.
    public var enumType: EnumDescriptor? {
        guard type == .enum, let pointer = raw.descriptor else { return nil }
        return EnumDescriptor(pointer.assumingMemoryBound(to: ProtobufCEnumDescriptor.self))
    }

    /// The full name of the message or enum type, for those fields.
    public var typeName: String? { messageType?.name ?? enumType?.name }

    /// True for a `map<K, V>` field: a repeated field of the entry type protoc
    /// names after it (`metadata` → `…MetadataEntry`).
    public var isMap: Bool {
        guard label == .repeated, let entry = messageType, entry.isMapEntry else { return false }
        return entry.name == "\(message.name).\(Self.camelCase(name, upperFirst: true))Entry"
    }

    /// The key and value fields of a map field's entry type.
    public var mapEntry: (key: FieldDescriptor, value: FieldDescriptor)? {
        guard isMap, let entry = messageType else { return nil }
        let fields = entry.fields
        return (fields[0], fields[1])
    }

    /// How the generated C struct records whether the field is set.
    public var presence: FieldPresence {
        if isOneofMember { return .oneofCase(offset: Int(raw.quantifier_offset)) }
        switch label {
        case .repeated: return .count(offset: Int(raw.quantifier_offset))
        case .required: return .always
        case .singular: return type == .message ? .pointer : .nonDefault
        case .optional:
            switch type {
            case .message, .string: return .pointer
            default: return .hasFlag(offset: Int(raw.quantifier_offset))
            }
        }
    }

    /// The byte offset of the field's value in the generated C struct.
    public var offset: Int { Int(raw.offset) }

    /// protoc's JSON name rule: drop each `_` and upper-case the letter after it.
    public static func jsonName(_ name: String) -> String { camelCase(name, upperFirst: false) }

    static func camelCase(_ name: String, upperFirst: Bool) -> String {
        var result = ""
        var upperNext = upperFirst
        for character in name {
            if character == "_" {
                upperNext = true
            } else if upperNext {
                result += character.uppercased()
                upperNext = false
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// A field's label in protobuf-c terms.
public enum FieldLabel: Sendable, Hashable {
    /// proto3 without a label: scalars have no presence.
    case singular
    /// proto3 `optional` or proto2 optional: explicit presence.
    case optional
    case repeated
    /// proto2 only.
    case required

    init(_ label: ProtobufCLabel) {
        switch label {
        case PROTOBUF_C_LABEL_REQUIRED: self = .required
        case PROTOBUF_C_LABEL_OPTIONAL: self = .optional
        case PROTOBUF_C_LABEL_REPEATED: self = .repeated
        default: self = .singular
        }
    }
}

/// How a generated C struct records that a field is set.
public enum FieldPresence: Sendable, Hashable {
    /// Set when the value differs from the type's zero (proto3 scalars).
    case nonDefault
    /// Set when the pointer is not NULL (messages, optional strings).
    case pointer
    /// A `protobuf_c_boolean has_x` at `offset`.
    case hasFlag(offset: Int)
    /// A oneof case (`uint32`) at `offset` that equals the field number.
    case oneofCase(offset: Int)
    /// A `size_t n_x` element count at `offset`; the value is a C array.
    case count(offset: Int)
    /// proto2 required: always present.
    case always
}
