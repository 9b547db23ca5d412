/// Bytes waiting for a socket: appended at the end, written from the front.
///
/// Held as a queue of byte arrays ("chunks"), each freed as soon as it is written. An array
/// appended whole is kept as it is, with no copy, when the buffer is empty or the array is at
/// least `adoptionThreshold` (a big reply, made on a store thread); smaller appends are copied
/// to the last chunk, so a burst of small replies still leaves in a few writes.
///
/// The buffer, not `Array`, decides how a chunk grows: a chunk holding less than
/// `growthLimit` bytes doubles when an append does not fit; a fuller one is left as it is and
/// the append opens a new chunk sized for it (as it does after an adopted big array, which
/// takes no appends). So a chunk is at most about twice `growthLimit` (or the one append it
/// was made for), a closed chunk is full to within the append that did not fit (less than
/// `adoptionThreshold`), and only the last chunk may be half empty: the buffer holds its
/// unwritten bytes, within a quarter, plus one chunk. Before, arrays grown by `Array`'s
/// doubling held up to twice the unwritten bytes (a review measured 1.95× for 1 KB replies),
/// and one array for everything held twice the unwritten big replies, all of it resident once
/// the heap had reused it (10 peers that never read, each with 8.6 MiB of 456 KB replies
/// unwritten, took 14 MiB of RSS each; 9 with big replies adopted).
struct OutputBuffer {
    /// An appended array at least this big is kept as a chunk of its own instead of copied.
    static let adoptionThreshold = 1 << 16
    /// A chunk holding less than this doubles for an append that does not fit; a fuller one
    /// stays as it is, and the append opens a new chunk.
    static let growthLimit = 1 << 17
    /// The capacity of a new chunk for a small append.
    static let initialCapacity = 4096
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

    /// Whether the last chunk takes more appends: one made for small appends, or a small array
    /// adopted into an empty buffer; an adopted big array or a chunk made for one big append
    /// takes none.
    private var lastChunkGrows = false

    /// Bytes appended and not yet written.
    private(set) var unwrittenCount = 0

    /// True when everything appended was written.
    var isEmpty: Bool { unwrittenCount == 0 }

    /// Bytes of memory the buffer's arrays hold (their capacities), the spare one included.
    var heldCount: Int { chunks[head...].reduce(spare.capacity) { $0 + $1.capacity } }

    /// Appends `newBytes`, keeping the array itself when the buffer is empty or it is big.
    mutating func append(_ newBytes: [UInt8]) {
        guard !newBytes.isEmpty else { return }
        if head < chunks.count && newBytes.count < Self.adoptionThreshold {
            newBytes.withUnsafeBytes { append($0) }
        } else {
            unwrittenCount += newBytes.count
            chunks.append(newBytes)
            lastChunkGrows = newBytes.count < Self.adoptionThreshold
        }
    }

    /// Appends a copy of `newBytes`.
    mutating func append(_ newBytes: UnsafeRawBufferPointer) {
        guard !newBytes.isEmpty else { return }
        let last = makeRoom(for: newBytes.count)
        chunks[last].append(contentsOf: newBytes)
        unwrittenCount += newBytes.count
    }

    /// Lets `body` append at most `maximumCount` bytes to the end of the buffer (never change
    /// what is there), in a chunk with room for them; returns the bytes it added. More is
    /// appended too, but the chunk then grows as `Array` makes it.
    @discardableResult
    mutating func append(reserving maximumCount: Int, with body: (inout [UInt8]) throws -> Void) rethrows -> Int {
        let last = makeRoom(for: max(maximumCount, 1))
        let before = chunks[last].count
        defer {
            unwrittenCount += chunks[last].count - before
            if chunks[last].isEmpty {
                let unused = chunks.removeLast()
                if spare.capacity == 0 && unused.capacity <= Self.retainedCapacity { spare = unused }
            }
        }
        try body(&chunks[last])
        return chunks[last].count - before
    }

    /// The index of the last chunk, with room for `count` more bytes: the last unwritten chunk
    /// when they fit, or once it has doubled if it holds less than `growthLimit`; otherwise a
    /// new chunk (the spare array, or a new one).
    private mutating func makeRoom(for count: Int) -> Int {
        if head < chunks.count && lastChunkGrows {
            let last = chunks.count - 1
            let held = chunks[last].count
            let capacity = chunks[last].capacity
            if held + count <= capacity { return last }
            if held < Self.growthLimit && count < Self.adoptionThreshold {
                chunks[last].reserveCapacity(max(2 * capacity, held + count))
                return last
            }
        }
        var chunk: [UInt8] = []
        if spare.capacity >= count {
            swap(&chunk, &spare)
        } else {
            chunk.reserveCapacity(max(count, Self.initialCapacity))
        }
        chunks.append(chunk)
        lastChunkGrows = count < Self.adoptionThreshold
        return chunks.count - 1
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
}
