#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer in malloc'ed memory with a consumed prefix, for
/// socket reads and writes without Swift array copy-on-write checks.
/// Owned by one connection; `deallocate()` must be called exactly once.
struct ByteBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    /// Bytes before `start` are consumed.
    var start = 0
    /// Bytes in `start..<end` are pending.
    var end = 0

    init(capacity: Int) {
        guard let base = malloc(capacity) else { fatalError("out of memory") }
        self.base = base
        self.capacity = capacity
    }

    func deallocate() { free(base) }

    var pendingCount: Int { end - start }
    var isEmpty: Bool { end == start }
    var freeCount: Int { capacity - end }

    /// Makes room for `count` more bytes at `end`, moving pending bytes to the front or growing.
    mutating func reserve(_ count: Int) {
        if capacity - end >= count { return }
        if start > 0 {
            if end > start { memmove(base, base + start, end - start) }
            end -= start
            start = 0
            if capacity - end >= count { return }
        }
        var newCapacity = capacity * 2
        while newCapacity - end < count { newCapacity *= 2 }
        guard let grown = realloc(base, newCapacity) else { fatalError("out of memory") }
        base = grown
        capacity = newCapacity
    }

    /// Drops consumed bytes; resets to the front when nothing is pending.
    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }
}
