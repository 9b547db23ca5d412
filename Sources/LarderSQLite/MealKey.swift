/// A meal record id as its 128 bits: the key of `MealKeyIndex`.
struct MealKey: Hashable, Sendable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The bits of `id`, an 8-4-4-4-12 UUID string (either case), or nil when it is not one.
    init?(id: String) {
        var id = id
        guard let key = id.withUTF8({ Self(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = key
    }

    /// The bits of the UUID text in `utf8`, or nil when it is not one.
    init?(utf8: UnsafeRawBufferPointer) {
        guard utf8.count == 36,
              utf8[8] == UInt8(ascii: "-"), utf8[13] == UInt8(ascii: "-"),
              utf8[18] == UInt8(ascii: "-"), utf8[23] == UInt8(ascii: "-") else { return nil }
        var invalid: UInt8 = 0
        let high = Self.hex(utf8, 0..<8, &invalid) << 32 | Self.hex(utf8, 9..<13, &invalid) << 16
            | Self.hex(utf8, 14..<18, &invalid)
        let low = Self.hex(utf8, 19..<23, &invalid) << 48 | Self.hex(utf8, 24..<36, &invalid)
        guard invalid & 0xF0 == 0 else { return nil }
        self.init(high: high, low: low)
    }

    /// The hex digits at `range` as a number; a byte that is not one sets high bits of `invalid`.
    @inline(__always)
    private static func hex(_ utf8: UnsafeRawBufferPointer, _ range: Range<Int>, _ invalid: inout UInt8) -> UInt64 {
        var value: UInt64 = 0
        for offset in range {
            let nibble = Self.nibble(utf8[offset])
            invalid |= nibble
            value = value << 4 | UInt64(nibble & 0x0F)
        }
        return value
    }

    /// The id in lower case, 8-4-4-4-12.
    var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, word) in [high, low].enumerated() {
            for shift in stride(from: 60, through: 0, by: -4) {
                let position = index * 16 + (15 - shift / 4)
                if position == 8 || position == 12 || position == 16 || position == 20 { text.append(UInt8(ascii: "-")) }
                text.append(digits[Int((word >> UInt64(shift)) & 0x0F)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The hex value of `byte`, or 0xFF when it is not a hex digit.
    @inline(__always)
    private static func nibble(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        let letter = (byte | 0x20) &- UInt8(ascii: "a")  // either case
        return letter < 6 ? letter &+ 10 : 0xFF
    }
}
