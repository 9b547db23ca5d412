/// The percent-encoding of `grpc-message` (gRPC PROTOCOL-HTTP2.md): UTF-8 bytes outside
/// printable ASCII, and `%` itself, become `%XX`.
public enum GRPCPercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// Encodes a status message for the `grpc-message` trailer.
    public static func encode(_ message: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(message.utf8.count)
        for byte in message.utf8 {
            if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "%") {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes a `grpc-message` value; a malformed `%` sequence is kept as it is.
    public static func decode(_ value: some Collection<UInt8>) -> String {
        let input = Array(value)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
               let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(input[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
