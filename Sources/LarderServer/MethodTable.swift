#if canImport(Glibc)
import Glibc
#endif

/// Finds a method's handler from the C string of its name in a request
/// envelope, without first making a Swift `String` of it.
///
/// Open addressing over a cheap hash of the UTF-8 bytes (length and last
/// eight bytes: our names share long prefixes), confirmed by comparing all
/// bytes. A name that matches
/// an entry is one of our own paths, so it is valid UTF-8 by construction; a
/// name that matches none is left to the caller to validate and report.
struct MethodTable: Sendable {
    struct Entry: Sendable {
        let utf8: [UInt8]
        let hash: UInt64
        let handler: MethodHandler
    }

    private var slots: [Entry?]
    private let mask: Int

    init(_ handlers: [String: MethodHandler]) {
        var capacity = 16
        while capacity < handlers.count * 4 { capacity *= 2 }
        slots = Array(repeating: nil, count: capacity)
        mask = capacity - 1
        for (path, handler) in handlers {
            let utf8 = Array(path.utf8)
            let hash = utf8.withUnsafeBytes { Self.hash($0) }
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != nil { slot = (slot + 1) & mask }
            slots[slot] = Entry(utf8: utf8, hash: hash, handler: handler)
        }
    }

    /// The handler whose full method name is the NUL-terminated `name`.
    func handler(for name: UnsafePointer<CChar>) -> MethodHandler? {
        let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
        let hash = Self.hash(bytes)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while let entry = slots[slot] {
            if entry.hash == hash && entry.utf8.count == bytes.count
                && entry.utf8.withUnsafeBytes({ $0.baseAddress.map { memcmp($0, name, bytes.count) == 0 } ?? false })
            {
                return entry.handler
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var tail: UInt64 = 0
        let start = max(0, bytes.count - 8)
        for index in start..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
        let mixed = (tail ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15) &* 0xBF58_476D_1CE4_E5B9
        return mixed ^ (mixed >> 31)
    }
}
