/// Follows the TLS record boundaries in a stream of ciphertext (RFC 8446 §5.1: a 5-byte header
/// whose last two bytes give the length of the body that follows), without decrypting:
/// whether the bytes seen so far end inside a record.
///
/// OpenSSL keeps a partial record in its own buffer and gives nothing until it is whole, so
/// this is how a server knows a peer is holding one open (a record trickled byte by byte).
public struct TLSRecordBoundary: Sendable {
    /// Header bytes of the current record seen so far (0 between records).
    private var headerFilled = 0
    /// The high byte of the current record's length, once the header's fourth byte was seen.
    private var lengthHigh = 0
    /// Body bytes of the current record still to come.
    private var bodyRemaining = 0

    public init() {}

    /// True when the bytes seen so far end inside a record (its header or its body).
    public var isInsideRecord: Bool { headerFilled > 0 || bodyRemaining > 0 }

    /// Follows `bytes`, the next ciphertext of the stream.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            if bodyRemaining > 0 {
                let skipped = min(bodyRemaining, bytes.count - index)
                bodyRemaining -= skipped
                index += skipped
                continue
            }
            switch headerFilled {
            case 3: lengthHigh = Int(bytes[index])
            case 4: bodyRemaining = lengthHigh << 8 | Int(bytes[index])
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
