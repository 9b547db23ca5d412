/// Bounds-checked reading of protobuf wire primitives.
struct WireReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    mutating func skip(_ count: Int) -> Bool {
        guard bytes.count - offset >= count else { return false }
        offset += count
        return true
    }

    /// A field's value after its tag: what a scan looks at.
    enum FieldValue {
        /// Wire type 0.
        case varint(UInt64)
        /// Wire type 2: a string, bytes, a nested message or a packed repeated field.
        case lengthDelimited(UnsafeRawBufferPointer)
        /// Wire types 1 and 5, skipped.
        case fixed
    }

    /// Reads the value of a field of `wireType` (a tag's low three bits); nil when it is cut off
    /// or the wire type is one protobuf-c rejects (groups, 3 and 4; 6 and 7).
    @inline(__always)
    mutating func value(wireType: UInt64) -> FieldValue? {
        switch wireType {
        case 0: return varint().map { .varint($0) }
        case 1: return skip(8) ? .fixed : nil
        case 5: return skip(4) ? .fixed : nil
        case 2:
            guard let length = varint(), let bytes = take(length) else { return nil }
            return .lengthDelimited(bytes)
        default: return nil
        }
    }

    mutating func take(_ length: UInt64) -> UnsafeRawBufferPointer? {
        guard length <= UInt64(bytes.count - offset) else { return nil }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
        offset += Int(length)
        return slice
    }
}
