import CLarderProto
import CProtobufC
#if canImport(Glibc)
import Glibc
#endif

/// C messages built and compared from nothing but their protobuf-c descriptor,
/// so a field that proto/ has and the Swift type lacks cannot hide.
enum DescriptorSample {
    /// A malloc'ed message of type `descriptor` with every field set to a
    /// non-default value (repeated fields and maps get two elements). Of a
    /// oneof only member `variant % members` is set. A message type nested in
    /// itself is filled down to two levels. Free with `protobuf_c_message_free_unpacked(_, nil)`.
    static func make(_ descriptor: UnsafePointer<ProtobufCMessageDescriptor>, variant: Int, seed: Int = 0,
                     path: [UnsafePointer<ProtobufCMessageDescriptor>] = []) -> UnsafeMutablePointer<ProtobufCMessage> {
        let d = descriptor.pointee
        let raw = calloc(1, d.sizeof_message)!
        let message = raw.assumingMemoryBound(to: ProtobufCMessage.self)
        d.message_init(message)
        let path = path + [descriptor]
        for field in fields(of: descriptor) {
            let f = field.pointee
            if isOneofMember(f) {
                let members = fields(of: descriptor).filter { isOneofMember($0.pointee) && $0.pointee.quantifier_offset == f.quantifier_offset }
                guard members[variant % members.count] == field else { continue }
                raw.storeBytes(of: f.id, toByteOffset: Int(f.quantifier_offset), as: UInt32.self)
            }
            if f.type == CFieldType.message, let sub = f.descriptor,
               path.filter({ $0 == sub.assumingMemoryBound(to: ProtobufCMessageDescriptor.self) }).count >= 2 {
                continue  // a recursive type: stop here (the field stays absent)
            }
            if f.label == CFieldLabel.repeated {
                let count = 2
                let size = elementSize(f)
                let array = calloc(count, size)!
                for index in 0..<count {
                    setValue(f, at: array + index * size, seed: seed * 10 + index, variant: variant, path: path)
                }
                raw.storeBytes(of: count, toByteOffset: Int(f.quantifier_offset), as: Int.self)
                raw.storeBytes(of: array, toByteOffset: Int(f.offset), as: UnsafeMutableRawPointer.self)
                continue
            }
            if f.label == CFieldLabel.optional, hasPresenceFlag(f) {
                raw.storeBytes(of: protobuf_c_boolean(1), toByteOffset: Int(f.quantifier_offset), as: protobuf_c_boolean.self)
            }
            setValue(f, at: raw + Int(f.offset), seed: seed, variant: variant, path: path)
        }
        return message
    }

    /// Every difference between `a` and `b` (both of type `descriptor`), as "type.field: what".
    static func differences(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer,
                            _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>) -> [String] {
        var out: [String] = []
        let name = String(cString: descriptor.pointee.name)
        for field in fields(of: descriptor) {
            let f = field.pointee
            let here = "\(name).\(String(cString: f.name))"
            if isOneofMember(f) {
                let ca = a.load(fromByteOffset: Int(f.quantifier_offset), as: UInt32.self)
                let cb = b.load(fromByteOffset: Int(f.quantifier_offset), as: UInt32.self)
                if (ca == f.id) != (cb == f.id) { out.append("\(here): set in one, not the other"); continue }
                if ca != f.id { continue }
            }
            if f.label == CFieldLabel.repeated {
                let na = a.load(fromByteOffset: Int(f.quantifier_offset), as: Int.self)
                let nb = b.load(fromByteOffset: Int(f.quantifier_offset), as: Int.self)
                guard na == nb else { out.append("\(here): \(na) elements, then \(nb)"); continue }
                guard na > 0,
                      let pa = a.load(fromByteOffset: Int(f.offset), as: UnsafeRawPointer?.self),
                      let pb = b.load(fromByteOffset: Int(f.offset), as: UnsafeRawPointer?.self) else { continue }
                let size = elementSize(f)
                for index in 0..<na {
                    out += compareValue(f, pa + index * size, pb + index * size, "\(here)[\(index)]")
                }
                continue
            }
            if f.label == CFieldLabel.optional, hasPresenceFlag(f) {
                let ha = a.load(fromByteOffset: Int(f.quantifier_offset), as: protobuf_c_boolean.self)
                let hb = b.load(fromByteOffset: Int(f.quantifier_offset), as: protobuf_c_boolean.self)
                if ha != hb { out.append("\(here): present in one, not the other"); continue }
            }
            out += compareValue(f, a + Int(f.offset), b + Int(f.offset), here)
        }
        return out
    }

    /// How many fields `descriptor` has, map entries' included.
    static func fields(of descriptor: UnsafePointer<ProtobufCMessageDescriptor>) -> [UnsafePointer<ProtobufCFieldDescriptor>] {
        (0..<Int(descriptor.pointee.n_fields)).map { descriptor.pointee.fields + $0 }
    }

    /// True for the synthetic entry type of a map field (protobuf-c keeps no flag: nested `…Entry` of key and value).
    static func isMapEntry(_ descriptor: UnsafePointer<ProtobufCMessageDescriptor>) -> Bool {
        let names = fields(of: descriptor).map { String(cString: $0.pointee.name) }
        return String(cString: descriptor.pointee.short_name).hasSuffix("Entry") && names == ["key", "value"]
    }

    private static func isOneofMember(_ f: ProtobufCFieldDescriptor) -> Bool {
        f.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0
    }

    /// Optional scalars and bytes carry a has_ flag; strings and messages use NULL.
    private static func hasPresenceFlag(_ f: ProtobufCFieldDescriptor) -> Bool {
        !isOneofMember(f) && f.type != CFieldType.string && f.type != CFieldType.message
    }

    private static func elementSize(_ f: ProtobufCFieldDescriptor) -> Int {
        switch f.type {
        case CFieldType.int64, CFieldType.sint64, CFieldType.sfixed64, CFieldType.uint64,
             CFieldType.fixed64, CFieldType.double: 8
        case CFieldType.string, CFieldType.message: MemoryLayout<UnsafeRawPointer>.size
        case CFieldType.bytes: MemoryLayout<ProtobufCBinaryData>.size
        default: 4  // 32-bit ints, float, bool (protobuf_c_boolean), enums
        }
    }

    private static func setValue(_ f: ProtobufCFieldDescriptor, at p: UnsafeMutableRawPointer, seed: Int, variant: Int,
                                 path: [UnsafePointer<ProtobufCMessageDescriptor>]) {
        let s = Int(f.id) * 100 + seed + 1
        switch f.type {
        case CFieldType.int32, CFieldType.sint32, CFieldType.sfixed32: p.storeBytes(of: Int32(s), as: Int32.self)
        case CFieldType.uint32, CFieldType.fixed32: p.storeBytes(of: UInt32(s) + 0x8000_0000, as: UInt32.self)
        case CFieldType.int64, CFieldType.sint64, CFieldType.sfixed64:
            p.storeBytes(of: Int64(s) * 1_000_000_007, as: Int64.self)
        case CFieldType.uint64, CFieldType.fixed64: p.storeBytes(of: UInt64(s) << 40, as: UInt64.self)
        case CFieldType.float: p.storeBytes(of: Float(s) + 0.5, as: Float.self)
        case CFieldType.double: p.storeBytes(of: Double(s) + 0.25, as: Double.self)
        case CFieldType.bool: p.storeBytes(of: protobuf_c_boolean(1), as: protobuf_c_boolean.self)
        case CFieldType.enumType:
            let e = f.descriptor!.assumingMemoryBound(to: ProtobufCEnumDescriptor.self).pointee
            let nonZero = (0..<Int(e.n_values)).map { e.values[$0].value }.filter { $0 != 0 }
            p.storeBytes(of: nonZero.isEmpty ? 0 : nonZero[seed % nonZero.count], as: Int32.self)
        case CFieldType.string: p.storeBytes(of: strdup("s\(s)-é"), as: UnsafeMutablePointer<CChar>?.self)
        case CFieldType.bytes:
            let bytes: [UInt8] = [0x0A, 0x01, UInt8(truncatingIfNeeded: s), 0xFF]
            let data = malloc(bytes.count)!
            data.copyMemory(from: bytes, byteCount: bytes.count)
            p.storeBytes(of: ProtobufCBinaryData(len: bytes.count, data: data.assumingMemoryBound(to: UInt8.self)),
                         as: ProtobufCBinaryData.self)
        case CFieldType.message:
            let sub = f.descriptor!.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
            p.storeBytes(of: make(sub, variant: variant, seed: seed, path: path), as: UnsafeMutablePointer<ProtobufCMessage>.self)
        default:
            fatalError("DescriptorSample: field type \(f.type) is new; teach the drift test")
        }
    }

    private static func compareValue(_ f: ProtobufCFieldDescriptor, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer,
                                     _ here: String) -> [String] {
        switch f.type {
        case CFieldType.string:
            let sa = a.load(as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? ""
            let sb = b.load(as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? ""
            return sa == sb ? [] : ["\(here): \"\(sa)\" became \"\(sb)\""]
        case CFieldType.bytes:
            let da = a.load(as: ProtobufCBinaryData.self), db = b.load(as: ProtobufCBinaryData.self)
            let ba = da.data.map { Array(UnsafeBufferPointer(start: $0, count: da.len)) } ?? []
            let bb = db.data.map { Array(UnsafeBufferPointer(start: $0, count: db.len)) } ?? []
            return ba == bb ? [] : ["\(here): bytes \(ba) became \(bb)"]
        case CFieldType.message:
            let sub = f.descriptor!.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
            let ma = a.load(as: UnsafeRawPointer?.self), mb = b.load(as: UnsafeRawPointer?.self)
            switch (ma, mb) {
            case (nil, nil): return []
            case let (ma?, mb?): return differences(ma, mb, sub)
            default: return ["\(here): present in one, not the other"]
            }
        default:
            let size = elementSize(f)
            return memcmp(a, b, size) == 0 ? [] : ["\(here): the value changed"]
        }
    }
}

/// protobuf-c's ProtobufCType values (in the header's order; the test target does not see the C constants).
private enum CFieldType {
    static let int32 = ProtobufCType(rawValue: 0)
    static let sint32 = ProtobufCType(rawValue: 1)
    static let sfixed32 = ProtobufCType(rawValue: 2)
    static let int64 = ProtobufCType(rawValue: 3)
    static let sint64 = ProtobufCType(rawValue: 4)
    static let sfixed64 = ProtobufCType(rawValue: 5)
    static let uint32 = ProtobufCType(rawValue: 6)
    static let fixed32 = ProtobufCType(rawValue: 7)
    static let uint64 = ProtobufCType(rawValue: 8)
    static let fixed64 = ProtobufCType(rawValue: 9)
    static let float = ProtobufCType(rawValue: 10)
    static let double = ProtobufCType(rawValue: 11)
    static let bool = ProtobufCType(rawValue: 12)
    static let enumType = ProtobufCType(rawValue: 13)
    static let string = ProtobufCType(rawValue: 14)
    static let bytes = ProtobufCType(rawValue: 15)
    static let message = ProtobufCType(rawValue: 16)
}

/// protobuf-c's ProtobufCLabel values.
private enum CFieldLabel {
    static let required = ProtobufCLabel(rawValue: 0)
    static let optional = ProtobufCLabel(rawValue: 1)
    static let repeated = ProtobufCLabel(rawValue: 2)
    static let none = ProtobufCLabel(rawValue: 3)
}
