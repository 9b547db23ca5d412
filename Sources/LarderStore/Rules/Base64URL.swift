/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5).
enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { value |= UInt32(byte) << (16 - 8 * UInt32(offset)) }
            for position in 0..<(chunk.count + 1) {
                out.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`, or nil when it is not canonical unpadded base64url.
    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count * 3 / 4)
        var index = 0
        while index < utf8.count {
            let chunk = utf8[index..<min(index + 4, utf8.count)]
            var value: UInt32 = 0
            for (offset, char) in chunk.enumerated() {
                guard let digit = sextet(char) else { return nil }
                value |= UInt32(digit) << (18 - 6 * UInt32(offset))
            }
            let byteCount = chunk.count - 1
            for position in 0..<byteCount { out.append(UInt8(truncatingIfNeeded: value >> (16 - 8 * UInt32(position)))) }
            // Reject non-canonical trailing bits.
            let usedBits = UInt32(byteCount * 8)
            if usedBits < 24, value & ((1 << (24 - usedBits)) - 1) != 0 { return nil }
            index += 4
        }
        return out
    }

    private static func sextet(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
