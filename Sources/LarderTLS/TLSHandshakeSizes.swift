/// Follows the records a TLS client sends in the clear during its handshake (RFC 8446 §5.1)
/// and the handshake messages inside its handshake records (§4: a type byte and a 3-byte
/// length), without decrypting: the length each ClientHello claims, as soon as its header
/// has arrived, for every ClientHello of the connection (the second one after a
/// HelloRetryRequest too). OpenSSL buffers a handshake message whole by the length it claims.
public struct TLSHandshakeSizes: Sendable {
    /// The records, and their bodies.
    private var records = TLSRecordBoundary()
    /// Header bytes of the current handshake message seen so far, and the header itself.
    private var messageHeaderFilled = 0
    private var messageHeader: UInt32 = 0
    /// Body bytes of the current handshake message still to come.
    private var messageRemaining = 0

    /// The body length of the connection's first record, once its header has arrived.
    public var firstRecordLength: Int? { records.firstRecordLength }
    /// The largest length a ClientHello's header claimed so far (0: none seen yet).
    public private(set) var largestClientHello = 0

    public init() {}

    /// The handshake content type, and the ClientHello message type.
    static let handshakeRecord: UInt8 = 0x16
    static let clientHello: UInt8 = 0x01

    /// Follows `bytes`, the next bytes the client sent.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var records = self.records  // followed apart from self, which the handshake bodies change
        records.consume(bytes) { contentType, body in
            if contentType == Self.handshakeRecord { consumeHandshake(body) }
        }
        self.records = records
    }

    /// Handshake messages may span records, and a record may hold several.
    private mutating func consumeHandshake(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            if messageRemaining > 0 {
                let skipped = min(messageRemaining, bytes.count - index)
                messageRemaining -= skipped
                index += skipped
                continue
            }
            messageHeader = messageHeader << 8 | UInt32(bytes[index])
            index += 1
            messageHeaderFilled += 1
            guard messageHeaderFilled == 4 else { continue }
            let length = Int(messageHeader & 0xFF_FFFF)
            if UInt8(messageHeader >> 24) == Self.clientHello { largestClientHello = max(largestClientHello, length) }
            messageRemaining = length
            messageHeaderFilled = 0
            messageHeader = 0
        }
    }
}
