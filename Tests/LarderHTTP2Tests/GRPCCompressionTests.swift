@testable import LarderHTTP2
import LarderWire
import Testing

/// Compressed request messages (gRPC's doc/compression.md): gzip and deflate inflate, anything
/// else is refused with the encodings the server takes. The compressed inputs below were made
/// by Python's `gzip.compress(…, mtime=0)`, `zlib.compress` and `zlib.compressobj(wbits=-15)`,
/// not by the code under test.
@Suite("gRPC over HTTP/2: compressed request messages")
struct GRPCCompressionTests {
    /// "larder " × 50 (350 bytes).
    static let text = Array(String(repeating: "larder ", count: 50).utf8)
    static let textGzip: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x49, 0x2c, 0x4a, 0x49, 0x2d,
        0x52, 0xc8, 0x19, 0xa5, 0x68, 0x41, 0x01, 0x00, 0xfa, 0x34, 0x44, 0xf8, 0x5e, 0x01, 0x00, 0x00]
    static let textDeflate: [UInt8] = [
        0x78, 0x9c, 0xcb, 0x49, 0x2c, 0x4a, 0x49, 0x2d, 0x52, 0xc8, 0x19, 0xa5, 0x68, 0x41, 0x01, 0x00,
        0x5b, 0xb9, 0x82, 0x15]
    /// The same deflate data without the zlib header and trailer (raw deflate, RFC 1951).
    static let textRawDeflate: [UInt8] = [0xcb, 0x49, 0x2c, 0x4a, 0x49, 0x2d, 0x52, 0xc8, 0x19, 0xa5, 0x68, 0x41, 0x01, 0x00]
    /// 1,000 and 1,001 zero bytes, gzip.
    static let zeros1000Gzip: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x63, 0x60, 0x18, 0x05, 0xa3, 0x60,
        0x14, 0x0c, 0x77, 0x00, 0x00, 0x80, 0x17, 0x0b, 0x06, 0xe8, 0x03, 0x00, 0x00]
    static let zeros1001Gzip: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x63, 0x60, 0x18, 0x05, 0xa3, 0x60,
        0x14, 0x0c, 0x7b, 0x00, 0x00, 0xba, 0x67, 0xbc, 0x3f, 0xe9, 0x03, 0x00, 0x00]
    /// 900 zero bytes, deflate (zlib format).
    static let zeros900Deflate: [UInt8] = [
        0x78, 0x9c, 0x63, 0x60, 0x18, 0x05, 0xa3, 0x60, 0x14, 0x0c, 0x24, 0x00, 0x00, 0x03, 0x84, 0x00, 0x01]

    /// Starts a call under `encoding`, sends `compressed` with the compressed flag and half-closes; pumped.
    @discardableResult
    static func compressedCall(_ loop: Loopback, encoding: String?, _ compressed: [UInt8],
                               pump: Bool = true) throws -> Int32 {
        let extra = encoding.map { [("grpc-encoding", $0)] } ?? []
        let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b", extra: extra)))
        loop.client.sendMessage(streamID: id, compressed, compressed: true)
        loop.client.endInput(streamID: id)
        if pump { try loop.pump() }
        return id
    }

    static func status(_ loop: Loopback, _ id: Int32) -> (code: String?, message: String) {
        let trailers = loop.client.responses[id]?.trailers
        return (trailers?["grpc-status"], GRPCPercentEncoding.decode((trailers?["grpc-message"] ?? "").utf8))
    }

    @Test("gzip and deflate (zlib or raw) messages reach the call inflated",
          arguments: [("gzip", textGzip), ("deflate", textDeflate), ("deflate", textRawDeflate)])
    func inflates(encoding: String, compressed: [UInt8]) throws {
        let loop = try Loopback()
        let id = try Self.compressedCall(loop, encoding: encoding, compressed)
        #expect(loop.events.contains(.message(streamID: id, Self.text)))
        #expect(loop.client.responses[id]?.trailers["grpc-status"] == nil)  // not answered: the call runs
    }

    @Test("a request delivered whole holds the inflated message, counted in its buffered bytes until the half-close")
    func wholeRequest() throws {
        let loop = try Loopback()
        loop.server.deliversWholeRequest = { _ in true }
        let id = try Self.compressedCall(loop, encoding: "gzip", Self.textGzip, pump: false)
        // Everything but the half-close first: the session holds the message.
        loop.client.endInput(streamID: id)
        try loop.pump()
        let delivered = loop.events.compactMap { if case .request(_, let message) = $0 { message } else { nil } }
        #expect(delivered == [Self.text])
        #expect(loop.server.bufferedInputBytes == 0)
    }

    @Test("an encoding the server does not take is UNIMPLEMENTED, naming those it does in grpc-accept-encoding")
    func unknownEncoding() throws {
        let loop = try Loopback()
        let id = try Self.compressedCall(loop, encoding: "snappy", [1, 2, 3])
        let response = try #require(loop.client.responses[id])
        #expect(response.trailers["grpc-status"] == String(StatusCode.unimplemented.rawValue))
        #expect(response.trailers["grpc-accept-encoding"] == "identity,deflate,gzip")
        #expect(Self.status(loop, id).message
                == "grpc-encoding \"snappy\" is not supported: compress with gzip or deflate, or send messages uncompressed (grpc-accept-encoding: identity,deflate,gzip)")
        guard case .cancelled(id, let reason) = loop.events.last else {
            Issue.record("events: \(loop.events)")
            return
        }
        #expect(reason.code == .unimplemented)
        #expect(!loop.events.contains { if case .message = $0 { true } else { false } })
    }

    @Test("an encoding declared but messages sent uncompressed is fine; the flag without an encoding, or under identity, is INTERNAL")
    func flagWithoutEncoding() throws {
        let loop = try Loopback()
        let fine = try loop.call(extra: [("grpc-encoding", "snappy")], message: [7])
        #expect(loop.events.contains(.message(streamID: fine, [7])))
        let none = try Self.compressedCall(loop, encoding: nil, Self.textGzip)
        #expect(Self.status(loop, none) == (String(StatusCode.internal.rawValue),
                                            "a message has the compressed flag set but the request declared no grpc-encoding"))
        let identity = try Self.compressedCall(loop, encoding: "identity", Self.textGzip)
        #expect(Self.status(loop, identity) == (String(StatusCode.internal.rawValue),
                                                "a message has the compressed flag set but the request's grpc-encoding is \"identity\""))
    }

    @Test("a message inflating past the message size is RESOURCE_EXHAUSTED; one inflating to exactly it is taken")
    func inflatesPastLimit() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 1000
        let loop = try Loopback(server: configuration)
        let atLimit = try Self.compressedCall(loop, encoding: "gzip", Self.zeros1000Gzip)
        #expect(loop.events.contains(.message(streamID: atLimit, [UInt8](repeating: 0, count: 1000))))
        let over = try Self.compressedCall(loop, encoding: "gzip", Self.zeros1001Gzip)
        #expect(Self.status(loop, over) == (String(StatusCode.resourceExhausted.rawValue),
            "request message of 29 bytes (gzip) inflates to more than the limit of 1000 bytes"))
        #expect(loop.server.bufferedInputBytes == 0)
    }

    @Test("data that does not inflate is INTERNAL with zlib's reason, and the connection serves on",
          arguments: [
              (textGzip.prefix(20).map { $0 }, "gzip", "the compressed data ends early"),
              (textGzip + [9, 9], "gzip", "2 bytes follow the end of the compressed data"),
              (textDeflate, "gzip", "incorrect header check"),
              ([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x02, 0x03, 0xff, 0xff, 0xff, 0xff], "gzip", "invalid block type"),
              ([], "deflate", "the compressed data ends early"),
          ])
    func corrupt(compressed: [UInt8], encoding: String, reason: String) throws {
        let loop = try Loopback()
        let id = try Self.compressedCall(loop, encoding: encoding, compressed)
        #expect(Self.status(loop, id) == (String(StatusCode.internal.rawValue),
            "a \(encoding) request message of \(compressed.count) bytes does not inflate: \(reason)"))
        let next = try Self.compressedCall(loop, encoding: "deflate", Self.textDeflate)
        #expect(loop.events.contains(.message(streamID: next, Self.text)))
        #expect(loop.serverError == nil)
    }

    @Test("the compressed messages of one read inflate to at most maxDecompressedBytesPerRead; the next read starts afresh")
    func perReadAllowance() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 1000
        configuration.maxDecompressedBytesPerRead = 2000
        let loop = try Loopback(server: configuration)
        try loop.pump()  // the prefaces and SETTINGS first, so the three calls below come in one read
        let ids = try (0..<3).map { _ in try Self.compressedCall(loop, encoding: "deflate", Self.zeros900Deflate, pump: false) }
        try loop.clientToServer()
        try loop.pump()
        let zeros = [UInt8](repeating: 0, count: 900)
        #expect(loop.events.contains(.message(streamID: ids[0], zeros)))
        #expect(loop.events.contains(.message(streamID: ids[1], zeros)))
        #expect(Self.status(loop, ids[2]) == (String(StatusCode.resourceExhausted.rawValue),
            "the compressed requests of one read inflate to more than 2000 bytes in all: this one was refused; retry it"))
        let later = try Self.compressedCall(loop, encoding: "deflate", Self.zeros900Deflate)
        #expect(loop.events.contains(.message(streamID: later, zeros)))
    }

    @Test("a message refused for inflating too far is charged to the read: the next one in it meets what is left")
    func refusalsAreCharged() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 1000
        configuration.maxDecompressedBytesPerRead = 1500
        let loop = try Loopback(server: configuration)
        try loop.pump()
        let bomb = try Self.compressedCall(loop, encoding: "gzip", Self.zeros1001Gzip, pump: false)
        let next = try Self.compressedCall(loop, encoding: "deflate", Self.zeros900Deflate, pump: false)
        try loop.clientToServer()
        try loop.pump()
        #expect(Self.status(loop, bomb).message == "request message of 29 bytes (gzip) inflates to more than the limit of 1000 bytes")
        #expect(Self.status(loop, next) == (String(StatusCode.resourceExhausted.rawValue),
            "the compressed requests of one read inflate to more than 1500 bytes in all: this one was refused; retry it"))
    }

    @Test("a connection inflates at most inflateBytesPerReceivedByte times what it sent, plus initialInflateBytes")
    func inflateCredit() throws {
        var configuration = GRPCServerConfiguration()
        configuration.initialInflateBytes = 1000
        configuration.inflateBytesPerReceivedByte = 2
        let loop = try Loopback(server: configuration)
        let zeros = [UInt8](repeating: 0, count: 1000)
        // The preface, SETTINGS and this call's ~100 bytes earn ~250 on top of the first 1,000.
        let first = try Self.compressedCall(loop, encoding: "gzip", Self.zeros1000Gzip)
        #expect(loop.events.contains(.message(streamID: first, zeros)))
        let second = try Self.compressedCall(loop, encoding: "gzip", Self.zeros1000Gzip)
        #expect(Self.status(loop, second) == (String(StatusCode.resourceExhausted.rawValue),
            "the compressed requests of this connection inflate to more than 2 times the bytes it sent (and 1000 bytes more): this one was refused; send it uncompressed (at most \(configuration.maxMessageSize) bytes)"))
        // 1,000 bytes sent uncompressed earn 2,000 more.
        let plain = try loop.call(message: [UInt8](repeating: 5, count: 1000))
        #expect(loop.events.contains(.message(streamID: plain, [UInt8](repeating: 5, count: 1000))))
        let third = try Self.compressedCall(loop, encoding: "gzip", Self.zeros1000Gzip)
        #expect(loop.events.contains(.message(streamID: third, zeros)))
    }

    /// 100,000 zero bytes, gzip (132 bytes): a small bomb.
    static let zeros100000Gzip: [UInt8] =
        [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xed, 0xc1, 0x31, 0x01, 0x00, 0x00,
         0x00, 0xc2, 0xa0, 0xf5, 0x4f, 0x6d, 0x0d, 0x0f, 0xa0] + [UInt8](repeating: 0, count: 96)
        + [0x80, 0x57, 0x03, 0x7d, 0x95, 0x11, 0xd4, 0xa0, 0x86, 0x01, 0x00]

    @Test("a refused bomb is charged what its connection had left, not a whole zlib chunk more: the next compressed call is served")
    func aRefusedBombDoesNotOverdrawTheConnection() throws {
        var configuration = GRPCServerConfiguration()
        configuration.initialInflateBytes = 1000
        let loop = try Loopback(server: configuration)
        let bomb = try Self.compressedCall(loop, encoding: "gzip", Self.zeros100000Gzip)
        #expect(Self.status(loop, bomb).code == String(StatusCode.resourceExhausted.rawValue))
        // This call's ~100 bytes earn 32 times as much, more than its 350 bytes inflated; had the
        // bomb been charged a 16 KiB chunk of zeros, it would be refused too (grpc-go, which
        // compresses even tiny requests, saw that after a bomb).
        let next = try Self.compressedCall(loop, encoding: "gzip", Self.textGzip)
        #expect(loop.events.contains(.message(streamID: next, Self.text)))
    }

    // MARK: - Replies

    /// A reply that compresses well: 2,000 bytes of a short repeating text.
    static let bigReply = Array(String(repeating: "pantry shelf ", count: 154).utf8.prefix(2000))

    /// A call under `requestEncoding` (its message sent uncompressed) answered with `reply`, then OK.
    static func answeredCall(_ loop: Loopback, requestEncoding: String?, acceptEncoding: String?,
                             reply: [UInt8]) throws -> GRPCClientSession.Response {
        var extra: [(String, String)] = []
        if let requestEncoding { extra.append(("grpc-encoding", requestEncoding)) }
        if let acceptEncoding { extra.append(("grpc-accept-encoding", acceptEncoding)) }
        let id = try loop.call(extra: extra, message: [7])
        #expect(loop.server.sendMessage(streamID: id, reply))
        #expect(loop.server.sendTrailers(streamID: id, status: .ok))
        try loop.pump()
        return try #require(loop.client.responses[id])
    }

    @Test("replies of 1 KiB or more to a gzip or deflate call go compressed the same way, when the client accepts it",
          arguments: [("gzip", "identity,deflate,gzip", [UInt8]([0x1f, 0x8b])), ("deflate", "identity, deflate", [0x78]),
                      ("gzip", nil, [0x1f, 0x8b]),
                      // Content codings are case-insensitive (RFC 9110 §8.4.1); the reply names it in lower case.
                      ("GZIP", "IDENTITY, Gzip", [0x1f, 0x8b])])
    func compressedReplies(encoding: String, accept: String?, magic: [UInt8]) throws {
        let loop = try Loopback()
        let response = try Self.answeredCall(loop, requestEncoding: encoding, acceptEncoding: accept, reply: Self.bigReply)
        #expect(response.headers["grpc-encoding"] == encoding.lowercased())
        #expect(response.trailers["grpc-status"] == "0")
        let message = try #require(response.messages.first)
        #expect(Array(message.prefix(magic.count)) == magic)
        #expect(response.dataBytes < Self.bigReply.count / 4)
        var count = 0
        let inflated = try GRPCMessageCompression.inflate(message, encoding: try #require(GRPCMessageEncoding(name: encoding)),
                                                          limit: 1 << 20, inflated: &count)
        #expect(count == Self.bigReply.count)
        #expect(inflated == Self.bigReply)
    }

    @Test("replies stay uncompressed: under 1 KiB, not smaller compressed, not accepted, or an uncompressed call")
    func uncompressedReplies() throws {
        let loop = try Loopback()
        let small = Array(Self.bigReply.prefix(1000))
        let smallReply = try Self.answeredCall(loop, requestEncoding: "gzip", acceptEncoding: "gzip", reply: small)
        #expect(smallReply.headers["grpc-encoding"] == "gzip")  // the call's encoding; this message's flag is 0
        #expect(smallReply.messages == [small])
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<4000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(try Self.answeredCall(loop, requestEncoding: "gzip", acceptEncoding: "gzip", reply: noise).messages == [noise])
        let notAccepted = try Self.answeredCall(loop, requestEncoding: "gzip", acceptEncoding: "identity", reply: Self.bigReply)
        #expect(notAccepted.headers["grpc-encoding"] == nil)
        #expect(notAccepted.messages == [Self.bigReply])
        let plain = try Self.answeredCall(loop, requestEncoding: nil, acceptEncoding: "identity,deflate,gzip", reply: Self.bigReply)
        #expect(plain.headers["grpc-encoding"] == nil)
        #expect(plain.messages == [Self.bigReply])
    }
}
