#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem

/// Entity ids: lowercase UUID strings.
public enum StoreID {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Random bytes from the kernel's CSPRNG, fetched 4 KiB at a time: glibc's
    /// `arc4random_buf` makes a `getrandom` system call per call (2% of a create).
    private struct RandomPool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var next = 4096

        mutating func take16() -> [UInt8] {
            if next + 16 > bytes.count {
                bytes.withUnsafeMutableBytes { buffer in
                    if let base = buffer.baseAddress { arc4random_buf(base, buffer.count) }
                }
                next = 0
            }
            defer { next += 16 }
            return Array(bytes[next..<next + 16])
        }
    }

    private static let randomPool = LockedValue(RandomPool())

    /// A new random (version 4) UUID in lower case.
    public static func generate() -> String {
        var bytes = randomPool.withLock { $0.take16() }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return format(bytes)
    }

    /// The canonical lower-case form of `text` when it is a UUID
    /// (8-4-4-4-12 hex digits, any case), else nil.
    public static func normalized(_ text: String) -> String? {
        var text = text
        // nil: not a UUID; true: one with upper-case digits. One pass over the bytes in place.
        let hasUpper: Bool? = text.withUTF8 { utf8 in
            guard words(utf8: UnsafeRawBufferPointer(utf8)) != nil else { return nil }
            var upper = false
            for byte in utf8 where byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") { upper = true }
            return upper
        }
        guard let hasUpper else { return nil }
        return hasUpper ? text.lowercased() : text
    }

    /// The 16 bytes of a UUID string, or nil when it is not one.
    static func parse(_ text: String) -> [UInt8]? {
        var text = text
        guard let (high, low) = text.withUTF8({ words(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        return bytes(high: high, low: low)
    }

    /// The 128 bits of the UUID text in `utf8` (8-4-4-4-12 hex digits, either case) as
    /// two big-endian words, read in place; nil when it is not a UUID.
    public static func words(utf8: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64)? {
        guard utf8.count == 36,
              utf8[8] == UInt8(ascii: "-"), utf8[13] == UInt8(ascii: "-"),
              utf8[18] == UInt8(ascii: "-"), utf8[23] == UInt8(ascii: "-") else { return nil }
        var invalid: UInt8 = 0
        let high = hex(utf8, 0..<8, &invalid) << 32 | hex(utf8, 9..<13, &invalid) << 16 | hex(utf8, 14..<18, &invalid)
        let low = hex(utf8, 19..<23, &invalid) << 48 | hex(utf8, 24..<36, &invalid)
        guard invalid & 0xF0 == 0 else { return nil }
        return (high, low)
    }

    /// The lower-case 8-4-4-4-12 form of the UUID whose big-endian words are `high`, `low`.
    public static func format(high: UInt64, low: UInt64) -> String {
        format(bytes(high: high, low: low))
    }

    /// The lower-case 8-4-4-4-12 form of 16 bytes.
    static func format(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16)
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var out = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    buffer[out] = UInt8(ascii: "-")
                    out += 1
                }
                buffer[out] = hexDigits[Int(byte >> 4)]
                buffer[out + 1] = hexDigits[Int(byte & 0x0F)]
                out += 2
            }
            return out
        }
    }

    private static func bytes(high: UInt64, low: UInt64) -> [UInt8] {
        (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> UInt64(56 - 8 * (index % 8))) }
    }

    /// The hex digits at `range` as a number; a byte that is not one sets high bits of `invalid`.
    @inline(__always)
    private static func hex(_ utf8: UnsafeRawBufferPointer, _ range: Range<Int>, _ invalid: inout UInt8) -> UInt64 {
        var value: UInt64 = 0
        for offset in range {
            let nibble = nibble(utf8[offset])
            invalid |= nibble
            value = value << 4 | UInt64(nibble & 0x0F)
        }
        return value
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
