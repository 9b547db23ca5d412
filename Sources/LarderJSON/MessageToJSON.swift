import CProtobufC
import LarderWire

/// Reads a protobuf-c message struct field by field, by its descriptor, into JSON.
struct MessageToJSON {
    let options: ProtoJSON.Options

    func message(_ base: UnsafeRawPointer, _ type: MessageDescriptor, path: FieldPath) throws(RPCError) -> JSON {
        switch type.name {
        case ProtoJSON.timestampName: return try timestamp(base, type, path: path)
        case ProtoJSON.fieldMaskName: return fieldMask(base, type)
        default: break
        }
        var members: [JSON.Member] = []
        for field in type.fields {
            if let value = try self.field(field, of: base, path: path.field(field.jsonName)) {
                members.append(JSON.Member(field.jsonName, value))
            }
        }
        return .object(members)
    }

    /// The field's JSON value, or nil when it is left out (unset or default).
    private func field(_ field: FieldDescriptor, of base: UnsafeRawPointer, path: FieldPath) throws(RPCError) -> JSON? {
        let slot = base + field.offset
        switch field.presence {
        case .count(let offset):
            let count = base.load(fromByteOffset: offset, as: Int.self)
            guard count > 0, let array = slot.load(as: UnsafeRawPointer?.self) else {
                return options.emitDefaults ? (field.isMap ? .object([]) : .array([])) : nil
            }
            let stride = CLayout.stride(of: field.type)
            if let (key, value) = field.mapEntry {
                var members: [JSON.Member] = []
                for index in 0..<count {
                    guard let entry = (array + index * stride).load(as: UnsafeRawPointer?.self) else { continue }
                    let keyText = try mapKey(entry + key.offset, key, path: path)
                    members.append(JSON.Member(keyText, try scalar(entry + value.offset, value, path: path.key(keyText))))
                }
                return .object(members)
            }
            var items: [JSON] = []
            items.reserveCapacity(count)
            for index in 0..<count {
                items.append(try scalar(array + index * stride, field, path: path.index(index)))
            }
            return .array(items)
        case .pointer:
            guard slot.load(as: UnsafeRawPointer?.self) != nil else { return nil }
            return try scalar(slot, field, path: path)
        case .hasFlag(let offset):
            guard base.load(fromByteOffset: offset, as: Int32.self) != 0 else { return nil }
            return try scalar(slot, field, path: path)
        case .oneofCase(let offset):
            guard base.load(fromByteOffset: offset, as: UInt32.self) == field.number else { return nil }
            if field.type == .message && slot.load(as: UnsafeRawPointer?.self) == nil { return nil }
            return try scalar(slot, field, path: path)
        case .always:
            return try scalar(slot, field, path: path)
        case .nonDefault:
            if !options.emitDefaults && CLayout.isZero(slot, field.type) { return nil }
            return try scalar(slot, field, path: path)
        }
    }

    /// The JSON of one value of `field`'s type stored at `slot`.
    private func scalar(_ slot: UnsafeRawPointer, _ field: FieldDescriptor, path: FieldPath) throws(RPCError) -> JSON {
        switch field.type {
        case .int32, .sint32, .sfixed32: return .integer(slot.load(as: Int32.self))
        case .uint32, .fixed32: return .integer(slot.load(as: UInt32.self))
        case .int64, .sint64, .sfixed64: return .string(String(slot.load(as: Int64.self)))
        case .uint64, .fixed64: return .string(String(slot.load(as: UInt64.self)))
        case .float: return JSONNumbers.json(slot.load(as: Float.self))
        case .double: return JSONNumbers.json(slot.load(as: Double.self))
        case .bool: return .bool(slot.load(as: Int32.self) != 0)
        case .enum:
            let number = slot.load(as: Int32.self)
            return field.enumType?.name(of: number).map(JSON.string) ?? .integer(number)
        case .string: return .string(try string(slot, path: path))
        case .bytes:
            let data = slot.load(as: ProtobufCBinaryData.self)
            return .string(Base64.encode(CFields.bytes(data), alphabet: .standard, padded: true))
        case .message:
            guard let message = slot.load(as: UnsafeRawPointer?.self), let type = field.messageType else { return .null }
            return try self.message(message, type, path: path)
        }
    }

    private func string(_ slot: UnsafeRawPointer, path: FieldPath) throws(RPCError) -> String {
        let pointer = slot.load(as: UnsafePointer<CChar>?.self)
        guard let pointer, pointer.pointee != 0 else { return "" }
        guard let text = String(validatingCString: pointer) else {
            throw RPCError.invalidArgument("\(path.description): string is not valid UTF-8")
        }
        return text
    }

    /// A map key as JSON object member name: strings as they are, numbers in decimal, bools as true/false.
    private func mapKey(_ slot: UnsafeRawPointer, _ key: FieldDescriptor, path: FieldPath) throws(RPCError) -> String {
        switch try scalar(slot, key, path: path) {
        case .string(let text), .number(let text): return text
        case .bool(let value): return value ? "true" : "false"
        default: throw RPCError.invalidArgument("\(path.description): unsupported map key type \(key.type)")
        }
    }

    private func timestamp(_ base: UnsafeRawPointer, _ type: MessageDescriptor, path: FieldPath) throws(RPCError) -> JSON {
        guard let secondsField = type.field(named: "seconds"), let nanosField = type.field(named: "nanos") else {
            throw RPCError.internalError("\(type.name) has no seconds/nanos fields")
        }
        let seconds = base.load(fromByteOffset: secondsField.offset, as: Int64.self)
        let nanos = base.load(fromByteOffset: nanosField.offset, as: Int32.self)
        guard let text = RFC3339Timestamp.format(seconds: seconds, nanos: nanos) else {
            throw RPCError.invalidArgument(
                "\(path.description): timestamp \(seconds)s \(nanos)ns is outside 0001-01-01..9999-12-31")
        }
        return .string(text)
    }

    private func fieldMask(_ base: UnsafeRawPointer, _ type: MessageDescriptor) -> JSON {
        guard let pathsField = type.field(named: "paths"), case .count(let countOffset) = pathsField.presence else {
            return .string("")
        }
        let count = base.load(fromByteOffset: countOffset, as: Int.self)
        guard count > 0, let array = base.load(fromByteOffset: pathsField.offset, as: UnsafePointer<UnsafePointer<CChar>?>?.self)
        else { return .string("") }
        let paths = (0..<count).map { array[$0].map { String(cString: $0) } ?? "" }
        return .string(FieldMaskPaths.json(paths))
    }
}
