/// Tells from a connection's first bytes whether it speaks HTTP/2 (prior knowledge, h2c).
public enum HTTP2Preface {
    /// The client connection preface, RFC 9113 §3.4.
    public static let bytes: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// What a connection's first bytes say.
    public enum Match: Sendable, Equatable {
        /// The bytes start with the whole preface, or with its first four bytes (`PRI `) and then
        /// differ: an HTTP/2 client with a broken preface, which its session answers with GOAWAY
        /// PROTOCOL_ERROR. (No lean frame starts with `P`: that length is over any frame limit.)
        case http2
        /// The bytes are a proper prefix of the preface: wait for more.
        case needMoreBytes
        /// The bytes are something else.
        case notHTTP2
    }

    /// Compares the first bytes of a connection with the preface.
    public static func match(_ prefix: UnsafeRawBufferPointer) -> Match {
        let count = min(prefix.count, bytes.count)
        for index in 0..<count where prefix[index] != bytes[index] { return index >= 4 ? .http2 : .notHTTP2 }
        return count == bytes.count ? .http2 : .needMoreBytes
    }

    /// `match` for bytes in an array.
    public static func match(_ prefix: [UInt8]) -> Match {
        prefix.withUnsafeBytes { match($0) }
    }
}
