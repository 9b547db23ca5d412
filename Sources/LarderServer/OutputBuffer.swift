/// Bytes waiting for a socket: appended at the end, written from the front.
///
/// Held as a queue of byte arrays ("chunks"), each freed as soon as it is written. An array
/// appended whole is kept as it is, with no copy, when the buffer is empty or the array is at
/// least `adoptionThreshold` (a big reply, made on a store thread); smaller appends go to the
/// last chunk while it holds less than `chunkLimit`, so a burst of small replies still leaves
/// in one write. So big replies hold about their own size, plus the written part of the first
/// chunk (one reply at most); before, one array that grew by doubling held up to twice the
/// unwritten bytes, all of them resident once the heap had reused them (measured: 10 peers that
/// never read, each with 8.6 MiB of 456 KB replies unwritten, took 14 MiB of RSS each, now 9).
/// Small replies are still gathered in arrays that grow by doubling, and may hold up to about
/// twice their bytes (a review measured 1.95× for 1 KB replies, 1.14× for 20–40 KB ones).
struct OutputBuffer {
    /// An appended array at least this big is kept as a chunk of its own instead of copied.
    static let adoptionThreshold = 1 << 16
    /// The last chunk takes further appends while it holds less than this.
    static let chunkLimit = 1 << 18
    /// Capacity kept for reuse when the buffer empties; a larger array is given back.
    static let retainedCapacity = 1 << 16

    /// The chunks; those before `head` are written (and emptied).
    private var chunks: [[UInt8]] = []
    private var head = 0
    /// Bytes of `chunks[head]` already written.
    private var offset = 0
    /// An emptied array kept for the next append, so a connection answering small calls one
    /// burst at a time does not allocate for each.
    private var spare: [UInt8] = []

    /// Bytes appended and not yet written.
    private(set) var unwrittenCount = 0

    /// True when everything appended was written.
    var isEmpty: Bool { unwrittenCount == 0 }

    /// Bytes of memory the buffer's arrays hold (their capacities), the spare one included.
    var heldCount: Int { chunks[head...].reduce(spare.capacity) { $0 + $1.capacity } }

    /// Appends `newBytes`, keeping the array itself when the buffer is empty or it is big.
    mutating func append(_ newBytes: [UInt8]) {
        guard !newBytes.isEmpty else { return }
        unwrittenCount += newBytes.count
        if isLastChunkOpen && newBytes.count < Self.adoptionThreshold {
            chunks[chunks.count - 1].append(contentsOf: newBytes)
        } else {
            chunks.append(newBytes)
        }
    }

    /// Lets `body` append to the end of the buffer (never change what is there); returns the bytes it added.
    @discardableResult
    mutating func append(with body: (inout [UInt8]) throws -> Void) rethrows -> Int {
        if !isLastChunkOpen {
            chunks.append(spare)
            spare = []
        }
        let last = chunks.count - 1
        let before = chunks[last].count
        defer {
            let added = chunks[last].count - before
            unwrittenCount += added
            if chunks[last].isEmpty { spare = chunks.removeLast() }
        }
        try body(&chunks[last])
        return chunks[last].count - before
    }

    /// Calls `body` with the unwritten bytes of the first chunk (an empty buffer when there are
    /// none): a write takes the chunks one after another.
    func withUnwrittenBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        guard head < chunks.count else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try chunks[head].withUnsafeBytes { raw in
            Result { () throws(E) -> R in try body(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
        }.get()
    }

    /// Calls `body` with every unwritten byte, chunk by chunk in order, then empties the buffer
    /// (as if all was written; if `body` throws, what is left stays unwritten).
    mutating func drain<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        while !isEmpty {
            let count = try withUnwrittenBytes { bytes throws(E) in
                try body(bytes)
                return bytes.count
            }
            consume(count)
        }
    }

    /// Marks the first `count` unwritten bytes written, freeing each chunk once written.
    mutating func consume(_ count: Int) {
        precondition(count >= 0 && count <= unwrittenCount, "consumed more than was unwritten")
        unwrittenCount -= count
        offset += count
        while head < chunks.count && offset >= chunks[head].count {
            offset -= chunks[head].count
            keepAsSpare(taking: head)
            head += 1
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    /// Drops everything, written or not.
    mutating func removeAll() {
        for index in head..<chunks.count { keepAsSpare(taking: index) }
        chunks.removeAll(keepingCapacity: true)
        head = 0
        offset = 0
        unwrittenCount = 0
    }

    /// Empties `chunks[index]`, keeping its array as the spare when none is kept and it is small.
    private mutating func keepAsSpare(taking index: Int) {
        var array: [UInt8] = []
        swap(&array, &chunks[index])
        if spare.capacity == 0 && array.capacity <= Self.retainedCapacity {
            array.removeAll(keepingCapacity: true)
            spare = array
        }
    }

    /// True when the last chunk is unwritten and may take more bytes.
    private var isLastChunkOpen: Bool {
        head < chunks.count && chunks[chunks.count - 1].count < Self.chunkLimit
    }
}
