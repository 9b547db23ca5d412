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

    mutating func take(_ length: UInt64) -> UnsafeRawBufferPointer? {
        guard length <= UInt64(bytes.count - offset) else { return nil }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
        offset += Int(length)
        return slice
    }
}
