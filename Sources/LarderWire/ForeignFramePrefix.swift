/// What a frame's 4-byte length prefix says when it is another protocol's first bytes, which no
/// Larder peer sends (`--max-frame-bytes` is at most 256 MiB, so a length's first byte is at most
/// 0x10): a client names the protocol instead of reporting an absurd frame length.
public enum ForeignFramePrefix: Equatable, Sendable {
    /// Printable ASCII, such as HTTP/1's "HTTP": the text.
    case text(String)
    /// A TLS record header (content type 0x14-0x17, then major version 3).
    case tlsRecord

    /// The protocol `prefix` (a frame's first 4 bytes) begins; nil for any other 4 bytes.
    public init?(_ prefix: some Collection<UInt8>) {
        let bytes = Array(prefix)
        guard bytes.count == 4 else { return nil }
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            self = .text(String(decoding: bytes, as: UTF8.self))
        } else if (0x14...0x17).contains(bytes[0]), bytes[1] == 0x03 {
            self = .tlsRecord
        } else {
            return nil
        }
    }
}
