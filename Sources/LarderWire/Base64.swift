/// Base64 (RFC 4648 §4 and §5) in the variants Larder's formats use: page tokens (URL-safe,
/// unpadded, canonical), the proto3 JSON mapping of `bytes` (standard out; either alphabet,
/// padded or not, in) and gRPC's `-bin` metadata (standard, unpadded out; padded or not in).
public enum Base64 {
    /// The two 64-character alphabets: `+/` (standard) or `-_` (URL- and file-name-safe).
    public enum Alphabet: Sendable {
        case standard
        case urlSafe
    }

    /// What `decode` accepts.
    public struct Rules: Sendable {
        /// Accept the standard alphabet's `+` and `/`.
        public var standard: Bool
        /// Accept the URL-safe alphabet's `-` and `_`.
        public var urlSafe: Bool
        /// Accept `=` padding to a multiple of 4 characters (unpadded input is always accepted).
        public var padding: Bool
        /// Refuse a final group whose unused low bits are not zero, so each byte string has one text.
        public var canonical: Bool

        public init(standard: Bool, urlSafe: Bool, padding: Bool, canonical: Bool) {
            self.standard = standard
            self.urlSafe = urlSafe
            self.padding = padding
            self.canonical = canonical
        }
    }

    private static let standardCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafeCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` as base64 text, `=`-padded to a multiple of 4 characters when `padded`.
    public static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet, padded: Bool) -> String {
        let characters = alphabet == .standard ? standardCharacters : urlSafeCharacters
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(characters[Int(accumulator >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 { output.append(characters[Int(accumulator << UInt32(6 - bits) & 0x3F)]) }
        if padded { while output.count % 4 != 0 { output.append(UInt8(ascii: "=")) } }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not base64 under `rules`.
    public static func decode(_ text: some Collection<UInt8>, rules: Rules) -> [UInt8]? {
        var input = Array(text)
        if rules.padding, input.count % 4 == 0, input.last == UInt8(ascii: "=") {
            input.removeLast()
            if input.last == UInt8(ascii: "=") { input.removeLast() }
        }
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in input {
            guard let value = sextet(character, rules) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        if rules.canonical, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return output
    }

    /// The 6-bit value of one character, or nil when `rules` do not accept it.
    private static func sextet(_ character: UInt8, _ rules: Rules) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where rules.standard: 62
        case UInt8(ascii: "/") where rules.standard: 63
        case UInt8(ascii: "-") where rules.urlSafe: 62
        case UInt8(ascii: "_") where rules.urlSafe: 63
        default: nil
        }
    }
}
