/// Base64 for `-bin` metadata: gRPC senders emit it unpadded, receivers accept both forms.
public enum GRPCBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Decodes padded or unpadded standard base64; nil for anything else.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var input = Array(text)
        if input.count % 4 == 0, input.last == UInt8(ascii: "=") {
            input.removeLast()
            if input.last == UInt8(ascii: "=") { input.removeLast() }
        }
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in input {
            let value = decodeTable[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits of a final partial group must be zero (canonical encoding).
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }

    /// Encodes as unpadded standard base64.
    public static func encode(_ bytes: some Collection<UInt8>, padded: Bool = false) -> String {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int(accumulator >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(accumulator << UInt32(6 - bits) & 0x3F)]) }
        if padded { while output.count % 4 != 0 { output.append(UInt8(ascii: "=")) } }
        return String(decoding: output, as: UTF8.self)
    }
}
