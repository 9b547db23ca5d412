/// Follows the TLS record boundaries in a stream of ciphertext (RFC 8446 §5.1: a 5-byte header,
/// the content type first and the length of the body that follows last), without decrypting:
/// whether the bytes seen so far end inside a record, and, for whoever asks, each record's
/// body bytes with its content type.
///
/// OpenSSL keeps a partial record in its own buffer and gives nothing until it is whole, so
/// this is how a server knows a peer is holding one open (a record trickled byte by byte).
public struct TLSRecordBoundary: Sendable {
    /// Header bytes of the current record seen so far (0 between records).
    private var headerFilled = 0
    /// The current record's content type, once the header's first byte was seen.
    private var contentType: UInt8 = 0
    /// The high byte of the current record's length, once the header's fourth byte was seen.
    private var lengthHigh = 0
    /// Body bytes of the current record still to come.
    private var bodyRemaining = 0

    /// The body length of the stream's first record, once its header has arrived.
    public private(set) var firstRecordLength: Int?

    public init() {}

    /// True when the bytes seen so far end inside a record (its header or its body).
    public var isInsideRecord: Bool { headerFilled > 0 || bodyRemaining > 0 }

    /// Follows `bytes`, the next ciphertext of the stream.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        consume(bytes) { _, _ in }
    }

    /// Follows `bytes`, the next ciphertext of the stream, passing each run of record body bytes
    /// in it to `body` with its record's content type (a body split across reads comes in parts).
    public mutating func consume(_ bytes: UnsafeRawBufferPointer, body: (_ contentType: UInt8, UnsafeRawBufferPointer) -> Void) {
        var index = 0
        while index < bytes.count {
            if bodyRemaining > 0 {
                let count = min(bodyRemaining, bytes.count - index)
                body(contentType, UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                bodyRemaining -= count
                index += count
                continue
            }
            switch headerFilled {
            case 0: contentType = bytes[index]
            case 3: lengthHigh = Int(bytes[index])
            case 4:
                bodyRemaining = lengthHigh << 8 | Int(bytes[index])
                if firstRecordLength == nil { firstRecordLength = bodyRemaining }
            default: break
            }
            index += 1
            headerFilled = headerFilled == 4 ? 0 : headerFilled + 1
        }
    }

    /// `consume` for bytes in an array.
    public mutating func consume(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { consume($0) }
    }
}
