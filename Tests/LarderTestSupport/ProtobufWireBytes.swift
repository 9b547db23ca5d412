/// Protobuf wire bytes written by hand, for inputs no encoder makes (repeated singular fields,
/// unknown field numbers, out-of-range enum values).
public enum ProtobufWireBytes {
    /// `value` as a protobuf varint: 7 bits a byte, low bits first.
    public static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
        return out
    }
}
