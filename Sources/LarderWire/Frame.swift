/// Length-prefixed framing: a 4-byte unsigned big-endian length N, then N bytes.
public enum Frame {
    /// Bytes of the length prefix.
    public static let headerSize = 4
    /// The default maximum N, 4 MiB.
    public static let defaultMaxSize = 4 * 1024 * 1024

    /// Appends one frame holding `body` to `buffer`.
    public static func append(_ body: [UInt8], to buffer: inout [UInt8]) {
        appendHeader(length: body.count, to: &buffer)
        buffer.append(contentsOf: body)
    }

    /// Appends the 4-byte big-endian length prefix.
    public static func appendHeader(length: Int, to buffer: inout [UInt8]) {
        let n = UInt32(truncatingIfNeeded: length)
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
