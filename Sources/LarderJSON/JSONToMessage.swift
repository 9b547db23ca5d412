import CProtobufC
import LarderWire

/// Builds a protobuf-c message struct from JSON, field by field, by its
/// descriptor; every allocation belongs to `arena`.
struct JSONToMessage {
    let arena: CArena

    /// A new message of `type` (a `ProtobufCMessage`-headed struct) holding `json`.
    func message(_ json: JSON, _ type: MessageDescriptor, path: FieldPath) throws(RPCError) -> UnsafeMutableRawPointer {
        switch type.name {
        case ProtoJSON.timestampName: return try timestamp(json, type, path: path)
        case ProtoJSON.fieldMaskName: return try fieldMask(json, type, path: path)
        default: break
        }
        guard case .object(let members) = json else {
            throw ProtoJSON.typeError(path, expected: "an object (\(type.name))", got: json)
        }
        let base = newMessage(type)
        let fields = type.fields
        var seen: [UInt32: String] = [:]
        var oneofs: [Int: String] = [:]
        for member in members {
            let memberPath = path.field(member.key)
            guard let field = fields.first(where: { $0.jsonName == member.key || $0.name == member.key }) else {
                let known = fields.map(\.jsonName).joined(separator: ", ")
                throw RPCError.invalidArgument(
                    "\(memberPath.description): unknown field; \(type.name) has \(known.isEmpty ? "no fields" : known)")
            }
            if let previous = seen.updateValue(member.key, forKey: field.number) {
                throw RPCError.invalidArgument("\(memberPath.description): field given twice (also as \"\(previous)\")")
            }
            if case .null = member.value { continue }
            if case .oneofCase(let offset) = field.presence,
               let other = oneofs.updateValue(member.key, forKey: offset) {
                throw RPCError.invalidArgument(
                    "\(memberPath.description): only one field of a oneof may be set, \"\(other)\" is set already")
            }
            try set(field, of: base, to: member.value, path: memberPath)
        }
        return base
    }

    private func newMessage(_ type: MessageDescriptor) -> UnsafeMutableRawPointer {
        let base = arena.zeroedBytes(type.structSize)
        protobuf_c_message_init(type.pointer, base)
        return base
    }

    /// Stores `json` as the value of `field` in the struct at `base`, and marks it present.
    private func set(_ field: FieldDescriptor, of base: UnsafeMutableRawPointer, to json: JSON, path: FieldPath)
        throws(RPCError)
    {
        let slot = base + field.offset
        switch field.presence {
        case .count(let countOffset):
            let stride = CLayout.stride(of: field.type)
            if let (key, value) = field.mapEntry, let entryType = field.messageType {
                guard case .object(let members) = json else {
                    throw ProtoJSON.typeError(path, expected: "an object (map)", got: json)
                }
                let array = arena.zeroedBytes(stride * members.count)
                for (index, member) in members.enumerated() {
                    let entry = newMessage(entryType)
                    try store(mapKey(member.key, key, path: path.key(member.key)), key, at: entry + key.offset,
                              path: path.key(member.key))
                    if case .null = member.value {
                        throw ProtoJSON.typeError(path.key(member.key), expected: "a value", got: member.value)
                    }
                    try store(member.value, value, at: entry + value.offset, path: path.key(member.key))
                    (array + index * stride).storeBytes(of: entry, as: UnsafeMutableRawPointer.self)
                }
                base.storeBytes(of: members.count, toByteOffset: countOffset, as: Int.self)
                slot.storeBytes(of: members.isEmpty ? nil : array, as: UnsafeMutableRawPointer?.self)
                return
            }
            guard case .array(let items) = json else {
                throw ProtoJSON.typeError(path, expected: "an array", got: json)
            }
            let array = arena.zeroedBytes(stride * items.count)
            for (index, item) in items.enumerated() {
                if case .null = item {
                    throw ProtoJSON.typeError(path.index(index), expected: "a value", got: item)
                }
                try store(item, field, at: array + index * stride, path: path.index(index))
            }
            base.storeBytes(of: items.count, toByteOffset: countOffset, as: Int.self)
            slot.storeBytes(of: items.isEmpty ? nil : array, as: UnsafeMutableRawPointer?.self)
        case .hasFlag(let offset):
            try store(json, field, at: slot, path: path)
            base.storeBytes(of: Int32(1), toByteOffset: offset, as: Int32.self)
        case .oneofCase(let offset):
            try store(json, field, at: slot, path: path)
            base.storeBytes(of: field.number, toByteOffset: offset, as: UInt32.self)
        case .pointer, .always, .nonDefault:
            try store(json, field, at: slot, path: path)
        }
    }

    /// Writes one value of `field`'s type at `slot`.
    private func store(_ json: JSON, _ field: FieldDescriptor, at slot: UnsafeMutableRawPointer, path: FieldPath)
        throws(RPCError)
    {
        switch field.type {
        case .int32, .sint32, .sfixed32:
            slot.storeBytes(of: try JSONNumbers.integer(json, Int32.self, typeName: "int32", path: path), as: Int32.self)
        case .uint32, .fixed32:
            slot.storeBytes(of: try JSONNumbers.integer(json, UInt32.self, typeName: "uint32", path: path), as: UInt32.self)
        case .int64, .sint64, .sfixed64:
            slot.storeBytes(of: try JSONNumbers.integer(json, Int64.self, typeName: "int64", path: path), as: Int64.self)
        case .uint64, .fixed64:
            slot.storeBytes(of: try JSONNumbers.integer(json, UInt64.self, typeName: "uint64", path: path), as: UInt64.self)
        case .float:
            slot.storeBytes(of: try JSONNumbers.float(json, path: path), as: Float.self)
        case .double:
            slot.storeBytes(of: try JSONNumbers.double(json, typeName: "double", path: path), as: Double.self)
        case .bool:
            guard case .bool(let value) = json else { throw ProtoJSON.typeError(path, expected: "true or false", got: json) }
            slot.storeBytes(of: value ? 1 : 0, as: Int32.self)
        case .enum:
            slot.storeBytes(of: try enumNumber(json, field, path: path), as: Int32.self)
        case .string:
            guard case .string(let text) = json else { throw ProtoJSON.typeError(path, expected: "a string", got: json) }
            slot.storeBytes(of: try cString(text, path: path), as: UnsafeMutableRawPointer.self)
        case .bytes:
            guard case .string(let text) = json else {
                throw ProtoJSON.typeError(path, expected: "a base64 string", got: json)
            }
            guard let bytes = Base64.decode(text.utf8, rules: .protoJSON) else {
                throw RPCError.invalidArgument("\(path.description): \"\(text)\" is not base64")
            }
            slot.storeBytes(of: arena.bytes(bytes), as: ProtobufCBinaryData.self)
        case .message:
            guard let type = field.messageType else { throw RPCError.internalError("\(path.description): no descriptor") }
            slot.storeBytes(of: try message(json, type, path: path), as: UnsafeMutableRawPointer.self)
        }
    }

    private func enumNumber(_ json: JSON, _ field: FieldDescriptor, path: FieldPath) throws(RPCError) -> Int32 {
        guard let type = field.enumType else { throw RPCError.internalError("\(path.description): no enum descriptor") }
        switch json {
        case .string(let name):
            if let number = type.number(named: name) { return number }
            let names = type.values.map(\.name).joined(separator: ", ")
            throw RPCError.invalidArgument("\(path.description): unknown \(type.name) value \"\(name)\"; expected one of \(names)")
        case .number:
            return try JSONNumbers.integer(json, Int32.self, typeName: "enum \(type.name)", path: path)
        default:
            throw ProtoJSON.typeError(path, expected: "an enum name (\(type.name))", got: json)
        }
    }

    /// The JSON value a map key's text stands for: the text itself for strings, else the number or bool in it.
    private func mapKey(_ key: String, _ field: FieldDescriptor, path: FieldPath) throws(RPCError) -> JSON {
        switch field.type {
        case .string: return .string(key)
        case .bool:
            guard key == "true" || key == "false" else {
                throw RPCError.invalidArgument("\(path.description): map key must be true or false")
            }
            return .bool(key == "true")
        default: return .string(key)
        }
    }

    /// A NUL-terminated copy of `text` (an empty string, never NULL, so repeated strings pack).
    private func cString(_ text: String, path: FieldPath) throws(RPCError) -> UnsafeMutableRawPointer {
        let utf8 = Array(text.utf8)
        if utf8.contains(0) {
            throw RPCError.invalidArgument("\(path.description): strings may not contain NUL (\\u0000)")
        }
        let pointer = arena.zeroedBytes(utf8.count + 1)
        utf8.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(pointer), byteCount: $0.count) }
        return pointer
    }

    private func timestamp(_ json: JSON, _ type: MessageDescriptor, path: FieldPath) throws(RPCError) -> UnsafeMutableRawPointer {
        guard case .string(let text) = json else {
            throw ProtoJSON.typeError(path, expected: "an RFC 3339 timestamp string", got: json)
        }
        guard let (seconds, nanos) = RFC3339Timestamp.parse(text) else {
            throw RPCError.invalidArgument(
                "\(path.description): \"\(text)\" is not an RFC 3339 timestamp such as 2026-11-30T08:00:00Z "
                    + "(years 0001-9999, offset Z or ±HH:MM)")
        }
        guard let secondsField = type.field(named: "seconds"), let nanosField = type.field(named: "nanos") else {
            throw RPCError.internalError("\(type.name) has no seconds/nanos fields")
        }
        let base = newMessage(type)
        base.storeBytes(of: seconds, toByteOffset: secondsField.offset, as: Int64.self)
        base.storeBytes(of: nanos, toByteOffset: nanosField.offset, as: Int32.self)
        return base
    }

    private func fieldMask(_ json: JSON, _ type: MessageDescriptor, path: FieldPath) throws(RPCError) -> UnsafeMutableRawPointer {
        guard case .string(let text) = json else {
            throw ProtoJSON.typeError(path, expected: "a string of comma-separated field paths", got: json)
        }
        guard let paths = FieldMaskPaths.paths(text) else {
            throw RPCError.invalidArgument("\(path.description): \"\(text)\" has an empty field path")
        }
        guard let pathsField = type.field(named: "paths") else {
            throw RPCError.internalError("\(type.name) has no paths field")
        }
        let base = newMessage(type)
        try set(pathsField, of: base, to: .array(paths.map(JSON.string)), path: path)
        return base
    }
}

extension Base64.Rules {
    /// `bytes` in the proto3 JSON mapping: either alphabet, padded or not, as protobuf's own parsers accept.
    static let protoJSON = Base64.Rules(standard: true, urlSafe: true, padding: true, canonical: false)
}
