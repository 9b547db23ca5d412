/// Reassembles gRPC length-prefixed messages (1 flag byte, 4-byte big-endian length, the bytes)
/// from DATA chunks of any size. A message longer than the limit, or a Compressed-Flag byte
/// other than 0 or 1, fails as soon as its prefix arrives, before any of it is buffered.
struct GRPCMessageDeframer {
    /// A complete message.
    struct Message: Equatable {
        var compressed: Bool
        var bytes: [UInt8]
    }

    /// Why the input is not a sequence of gRPC messages.
    enum Failure: Error, Equatable {
        /// A message prefix announced more than `limit` bytes.
        case tooLarge(length: UInt32, limit: Int)
        /// A Compressed-Flag byte other than 0 or 1 (gRPC's PROTOCOL-HTTP2.md allows no other).
        case badFlag(UInt8)
    }

    let maxMessageSize: Int
    private var prefix: [UInt8] = []
    private var body: [UInt8] = []
    private var expected = 0
    private var inBody = false

    init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    /// Whether no partial message is buffered.
    var isAtMessageBoundary: Bool { !inBody && prefix.isEmpty }

    /// Memory a partial message holds: its prefix and its buffer's capacity. The buffer grows
    /// as the message's bytes arrive (doubling, capped at the announced length), so this is
    /// at most about twice `receivedBytes`; a prefix alone reserves nothing, whatever it
    /// announces.
    var bufferedBytes: Int { prefix.count + body.capacity }

    /// Bytes of a partial message received so far.
    var receivedBytes: Int { prefix.count + body.count }

    /// The message `bytes` holds, when the deframer is between messages and `bytes` is exactly
    /// one whole message with a valid prefix (nothing is consumed otherwise: `append` then takes
    /// the bytes, and reports any error).
    @inline(__always)
    func wholeMessage(_ bytes: UnsafeRawBufferPointer) -> Message? {
        guard !inBody, prefix.isEmpty, bytes.count >= 5, bytes[0] <= 1 else { return nil }
        let length = Int(Self.length(bytes, prefixAt: 0))
        guard length == bytes.count - 5, length <= maxMessageSize else { return nil }
        return Message(compressed: bytes[0] == 1, bytes: Array(UnsafeRawBufferPointer(rebasing: bytes[5...])))
    }

    /// Consumes `bytes`, appending each message it completes to `messages`.
    mutating func append(_ bytes: UnsafeRawBufferPointer, into messages: inout [Message]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            if !inBody && prefix.isEmpty && bytes.count - offset >= 5 {
                // The usual case: a whole prefix in this chunk, read in place.
                let length = Self.length(bytes, prefixAt: offset)
                guard Int(length) <= maxMessageSize else { throw .tooLarge(length: length, limit: maxMessageSize) }
                guard bytes[offset] <= 1 else { throw .badFlag(bytes[offset]) }
                let compressed = bytes[offset] == 1
                if bytes.count - offset - 5 >= Int(length) {
                    // ... and the whole message: no buffering at all.
                    let start = offset + 5
                    messages.append(Message(compressed: compressed, bytes: Array(bytes[start..<(start + Int(length))])))
                    offset = start + Int(length)
                    continue
                }
            }
            if !inBody {
                let take = min(5 - prefix.count, bytes.count - offset)
                prefix += bytes[offset..<(offset + take)]
                offset += take
                guard prefix.count == 5 else { return }
                let length = prefix.withUnsafeBytes { Self.length($0, prefixAt: 0) }
                guard Int(length) <= maxMessageSize else { throw .tooLarge(length: length, limit: maxMessageSize) }
                guard prefix[0] <= 1 else { throw .badFlag(prefix[0]) }
                expected = Int(length)
                inBody = true
            }
            let take = min(expected - body.count, bytes.count - offset)
            if body.capacity < body.count + take {
                body.reserveCapacity(min(expected, max(body.count + take, body.capacity * 2)))
            }
            body += bytes[offset..<(offset + take)]
            offset += take
            if body.count == expected {
                messages.append(Message(compressed: prefix[0] == 1, bytes: body))
                prefix.removeAll(keepingCapacity: true)
                body = []
                inBody = false
            }
        }
    }

    /// The message length in the 5-byte prefix at `offset` of `bytes` (big-endian, after the flag).
    @inline(__always)
    private static func length(_ bytes: UnsafeRawBufferPointer, prefixAt offset: Int) -> UInt32 {
        UInt32(bytes[offset + 1]) << 24 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 8
            | UInt32(bytes[offset + 4])
    }

    /// The 5-byte prefix of a message of `count` bytes.
    static func prefix(count: Int, compressed: Bool = false) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: count)
        return [compressed ? 1 : 0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
                UInt8(length & 0xFF)]
    }
}
