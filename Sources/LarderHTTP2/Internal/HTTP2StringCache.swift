/// Strings made from header bytes that a connection sends with every call (the method path, the
/// authority, metadata names, the user agent), kept so that a repeated value costs a compare
/// instead of an allocation and a UTF-8 check. Bounded: a few short entries, replaced in turn.
struct HTTP2StringCache {
    private var entries: [String] = []
    private var next = 0

    /// Entries kept, and the longest value worth keeping.
    static let capacity = 16
    static let maxLength = 128

    /// The bytes as a String (invalid UTF-8 repaired, as `String(decoding:as:)` does).
    mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        for entry in entries where entry.utf8.count == bytes.count {
            if entry.utf8.withContiguousStorageIfAvailable({ UnsafeRawBufferPointer($0).sameBytes(as: bytes) }) == true {
                return entry
            }
        }
        let made = String(decoding: bytes, as: UTF8.self)
        guard bytes.count <= Self.maxLength else { return made }
        if entries.count < Self.capacity {
            entries.append(made)
        } else {
            entries[next] = made
            next = (next + 1) % Self.capacity
        }
        return made
    }
}
