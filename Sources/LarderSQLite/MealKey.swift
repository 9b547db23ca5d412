/// A meal record id as its 128 bits: the key of `MealKeyIndex`.
struct MealKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// The bits of `id`, an 8-4-4-4-12 UUID string (either case), or nil when it is not one.
    init?(id: String) {
        var id = id
        guard let bits = id.withUTF8({ Self.parse($0) }) else { return nil }
        (high, low) = bits
    }

    private static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        guard utf8.count == 36 else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        var digits = 0
        for offset in 0..<36 {
            let char = utf8[offset]
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard char == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = char &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = char &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = char &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            if digits < 16 {
                words.0 = words.0 << 4 | UInt64(nibble)
            } else {
                words.1 = words.1 << 4 | UInt64(nibble)
            }
            digits += 1
        }
        return words
    }
}
