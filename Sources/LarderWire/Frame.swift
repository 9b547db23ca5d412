/// Length-prefixed framing: a 4-byte unsigned big-endian length N, then N bytes.
public enum Frame {
    /// Bytes of the length prefix.
    public static let headerSize = 4
    /// The default maximum N, 4 MiB.
    public static let defaultMaxSize = 4 * 1024 * 1024
    /// The largest maximum N a server may be configured with, 256 MiB (0x10000000): a length
    /// prefix within it begins with a byte of at most 0x10, so a lean frame is never taken
    /// for a TLS record (0x16) or the HTTP/2 client preface (`P`, 0x50), which the server
    /// tells apart from lean frames by a connection's first byte.
    public static let maxConfigurableSize = 256 * 1024 * 1024

    /// Appends one frame holding `body` to `buffer`. A body too long for the prefix
    /// (over 4 GiB) gets the prefix `FrameLength.unframeable`, which every decoder
    /// refuses (no limit reaches it), rather than a truncated length that would
    /// split the stream somewhere inside the body.
    public static func append(_ body: [UInt8], to buffer: inout [UInt8]) {
        appendHeader(length: FrameLength(exactly: body.count) ?? .unframeable, to: &buffer)
        buffer.append(contentsOf: body)
    }

    /// Appends the 4-byte big-endian length prefix.
    public static func appendHeader(length: FrameLength, to buffer: inout [UInt8]) {
        let n = length.value
        buffer.append(UInt8(truncatingIfNeeded: n >> 24))
        buffer.append(UInt8(truncatingIfNeeded: n >> 16))
        buffer.append(UInt8(truncatingIfNeeded: n >> 8))
        buffer.append(UInt8(truncatingIfNeeded: n))
    }

    /// One frame holding `body`.
    public static func encode(_ body: [UInt8]) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(headerSize + body.count)
        append(body, to: &buffer)
        return buffer
    }

    /// The envelope `message`, framed.
    public static func encode<M: ProtoMessage>(_ message: M) -> [UInt8] {
        encode(ProtoCodec.encode(message))
    }
}

/// The length of a frame's body, as its 4-byte prefix holds it: made only from a
/// count that fits, so a prefix is never truncated.
public struct FrameLength: Hashable, Sendable {
    /// The prefix's value.
    public let value: UInt32

    /// `count` as a frame length; nil when it is negative or over `limit` (at most
    /// 4 GiB - 1, what the prefix holds).
    public init?(exactly count: Int, limit: Int = Int(UInt32.max)) {
        guard count >= 0, count <= limit, let value = UInt32(exactly: count) else { return nil }
        self.value = value
    }

    private init(raw: UInt32) { value = raw }

    /// The largest prefix: above every frame limit (at most `Frame.maxConfigurableSize`), so
    /// refused by any decoder.
    public static let unframeable = FrameLength(raw: .max)
}
