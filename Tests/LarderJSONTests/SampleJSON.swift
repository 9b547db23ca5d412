import LarderJSON
import LarderWire

/// Builds, from a descriptor alone, a JSON object for a message with every
/// field set to a non-default value, written exactly as `ProtoJSON` prints it
/// (field-number order, canonical forms), so a round trip must reproduce it.
enum SampleJSON {
    static let depthLimit = 3

    static func message(_ type: MessageDescriptor, depth: Int = 0) -> JSON {
        switch type.name {
        case "google.protobuf.Timestamp": return .string("2026-11-30T08:00:00.120Z")
        case "google.protobuf.FieldMask": return .string("name,colorHex,mealRecord.eatenAt")
        default: break
        }
        var members: [JSON.Member] = []
        var oneofsSet: Set<Int> = []
        for field in type.fields {
            if case .oneofCase(let offset) = field.presence {
                guard oneofsSet.insert(offset).inserted else { continue }
            }
            if field.type == .message && depth >= depthLimit { continue }
            let value: JSON
            if let (key, entryValue) = field.mapEntry {
                value = .object([
                    JSON.Member(mapKey(key, 0), single(entryValue, depth: depth + 1)),
                    JSON.Member(mapKey(key, 1), single(entryValue, depth: depth + 1)),
                ])
            } else if field.label == .repeated {
                value = .array([single(field, depth: depth + 1), single(field, depth: depth + 1)])
            } else {
                value = single(field, depth: depth + 1)
            }
            members.append(JSON.Member(field.jsonName, value))
        }
        return .object(members)
    }

    /// One non-default value of the field's type.
    static func single(_ field: FieldDescriptor, depth: Int) -> JSON {
        switch field.type {
        case .int32, .sint32, .sfixed32: return .number("-7")
        case .uint32, .fixed32: return .number("4000000000")
        // Beyond 2^53: a Double would not hold these exactly.
        case .int64, .sint64, .sfixed64: return .string("-9007199254740993")
        case .uint64, .fixed64: return .string("18446744073709551615")
        case .float: return .number("1.5")
        case .double: return .number("-2.25")
        case .bool: return .bool(true)
        case .enum:
            let values = field.enumType?.values ?? []
            let value = values.last { $0.number != 0 } ?? values.first
            return value.map { .string($0.name) } ?? .number("1")
        case .string: return .string("廚房 🍙 \"quoted\" \\ tab\t")
        case .bytes: return .string("AAEC/w==")
        case .message:
            guard let type = field.messageType else { return .null }
            return message(type, depth: depth)
        }
    }

    static func mapKey(_ key: FieldDescriptor, _ index: Int) -> String {
        switch key.type {
        case .string: return ["authorization", "x-请求"][index]
        case .bool: return ["true", "false"][index]
        default: return ["1", "-2"][index]
        }
    }
}
