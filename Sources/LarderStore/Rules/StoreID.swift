#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

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

    private static let randomPool = Mutex(RandomPool())

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
        var hasUpper = false
        let valid = text.withUTF8 { utf8 -> Bool in
            guard utf8.count == 36 else { return false }
            for offset in 0..<36 {
                let char = utf8[offset]
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard char == UInt8(ascii: "-") else { return false }
                } else {
                    guard hexValue(char) != nil else { return false }
                    if char >= UInt8(ascii: "A") && char <= UInt8(ascii: "F") { hasUpper = true }
                }
            }
            return true
        }
        guard valid else { return nil }
        return hasUpper ? text.lowercased() : text
    }

    /// The 16 bytes of a UUID string, or nil when it is not one.
    static func parse(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var pending: UInt8 = 0
        var haveHalf = false
        for (offset, char) in utf8.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard char == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = hexValue(char) else { return nil }
            if haveHalf {
                bytes.append(pending << 4 | nibble)
            } else {
                pending = nibble
            }
            haveHalf.toggle()
        }
        return bytes
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

    private static func hexValue(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
