import LarderTLS
import Testing

/// The ClientHello lengths a server reads from the records a client sends in the clear.
struct TLSHandshakeSizesTests {
    static func record(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        [type, 0x03, 0x03, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    static func message(_ type: UInt8, claiming length: Int, body: [UInt8]) -> [UInt8] {
        [type, UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + body
    }

    static func sizes(of stream: [UInt8], inPiecesOf size: Int) -> TLSHandshakeSizes {
        var sizes = TLSHandshakeSizes()
        var start = 0
        while start < stream.count {
            let piece = Array(stream[start..<min(start + size, stream.count)])
            piece.withUnsafeBytes { sizes.consume($0) }
            start += size
        }
        return sizes
    }

    @Test(arguments: [1, 2, 5, 7, 4096])
    func everyClientHelloIsSeenWhateverTheReadSizes(pieceSize: Int) {
        // A first ClientHello, whole; a ChangeCipherSpec record; a second ClientHello whose
        // header spans two records, claiming 131,000 bytes.
        let first = Self.record(0x16, Self.message(0x01, claiming: 6, body: [1, 2, 3, 4, 5, 6]))
        let compatibility = Self.record(0x14, [0x01])
        let second = Self.message(0x01, claiming: 131_000, body: [0x03, 0x03, 0x42])
        let stream = first + compatibility + Self.record(0x16, Array(second[0..<2])) + Self.record(0x16, Array(second[2...]))
        let sizes = Self.sizes(of: stream, inPiecesOf: pieceSize)
        #expect(sizes.firstRecordLength == 10)
        #expect(sizes.largestClientHello == 131_000)
    }

    @Test func messagesOtherThanClientHellosAndOtherRecordsDoNotCount() {
        // Two messages in one record (a TLS 1.2 client's Certificate, then a
        // ClientKeyExchange), and application data whose bytes would read as a huge ClientHello.
        let handshake = Self.record(0x16, Self.message(0x0B, claiming: 3, body: [0, 0, 0])
                                    + Self.message(0x10, claiming: 1, body: [0]))
        let data = Self.record(0x17, [0x01, 0xFF, 0xFF, 0xFF])
        let sizes = Self.sizes(of: handshake + data, inPiecesOf: 3)
        #expect(sizes.largestClientHello == 0)
        #expect(sizes.firstRecordLength == 12)
    }

    @Test func aShortFirstRecordIsReported() {
        let sizes = Self.sizes(of: Self.record(0x16, [0x01, 0x00]), inPiecesOf: 64)
        #expect(sizes.firstRecordLength == 2)
        #expect(sizes.largestClientHello == 0)
    }
}
