@testable import LarderHTTP2
import Testing

@Suite("HTTP/2 client preface detection")
struct HTTP2PrefaceTests {
    @Test("the whole preface, with or without frames after it, is HTTP/2")
    func whole() {
        #expect(HTTP2Preface.match(HTTP2Preface.bytes) == .http2)
        #expect(HTTP2Preface.match(HTTP2Preface.bytes + [0, 0, 0, 4]) == .http2)
    }

    @Test("every proper prefix needs more bytes", arguments: 0..<24)
    func partial(_ count: Int) {
        #expect(HTTP2Preface.match(Array(HTTP2Preface.bytes.prefix(count))) == .needMoreBytes)
    }

    @Test("HTTP/1.1, TLS, a lean frame and bytes that differ within the first four are not HTTP/2")
    func other() {
        #expect(HTTP2Preface.match(Array("GET / HTTP/1.1\r\n".utf8)) == .notHTTP2)
        #expect(HTTP2Preface.match([0x16, 0x03, 0x01, 0x00, 0xa5]) == .notHTTP2)
        #expect(HTTP2Preface.match([0, 0, 0, 12, 10]) == .notHTTP2)
        #expect(HTTP2Preface.match(Array("PRX".utf8)) == .notHTTP2)
        #expect(HTTP2Preface.match(Array("PRIX".utf8)) == .notHTTP2)
    }

    @Test("a preface that starts right and then differs is HTTP/2: its session answers GOAWAY PROTOCOL_ERROR")
    func nearMiss() {
        #expect(HTTP2Preface.match(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\rX".utf8)) == .http2)
        #expect(HTTP2Preface.match(Array("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".utf8)) == .http2)
        #expect(HTTP2Preface.match(Array("PRI X".utf8)) == .http2)
    }
}
