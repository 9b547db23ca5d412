/// gRPC's length-prefixed message framing (1 flag byte, 4-byte big-endian length), for callers
/// that build a response in one buffer: `GRPCServerSession.sendFramedMessage` takes it as is.
public enum GRPCMessageFraming {
    /// The size of a message's prefix.
    public static let prefixSize = 5

    /// Appends the prefix of an uncompressed message of `count` bytes.
    public static func appendPrefix(count: Int, to buffer: inout [UInt8]) {
        let length = UInt32(truncatingIfNeeded: count)
        buffer.append(0)
        buffer.append(UInt8(length >> 24))
        buffer.append(UInt8(length >> 16 & 0xFF))
        buffer.append(UInt8(length >> 8 & 0xFF))
        buffer.append(UInt8(length & 0xFF))
    }

    /// Whether `bytes[offset...]` is exactly one uncompressed message with its prefix.
    static func isFramed(_ bytes: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, bytes.count - offset >= prefixSize, bytes[offset] == 0 else { return false }
        let length = bytes[(offset + 1)...(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Int(length) == bytes.count - offset - prefixSize
    }
}
