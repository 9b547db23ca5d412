@testable import LarderHTTP2
import LarderWire
import Testing

@Suite("gRPC over HTTP/2: request heads")
struct GRPCRequestHeadTests {
    @Test("grpc-timeout in every unit becomes nanoseconds", arguments: [
        ("1H", UInt64(3_600_000_000_000)), ("2M", 120_000_000_000), ("3S", 3_000_000_000),
        ("250m", 250_000_000), ("5u", 5_000), ("6n", 6), ("0S", 0), ("12345678m", 12_345_678_000_000),
        ("99999999H", UInt64.max), ("00000001S", 1_000_000_000),
        // More than gRPC's 8 digits, as grpclib sends for long timeouts; up to 18 are taken.
        ("999999999S", 999_999_999_000_000_000), ("999999999999999999n", 999_999_999_999_999_999),
        ("999999999999999999H", UInt64.max),
    ])
    func timeoutUnits(_ value: String, _ nanoseconds: UInt64) {
        #expect(GRPCTimeout.nanoseconds(Array(value.utf8)) == nanoseconds)
    }

    @Test("malformed grpc-timeout values are refused", arguments: ["", "S", "1", "1234567890123456789S", "1x", "-1S", "1.5S", " 1S", "1s"])
    func timeoutMalformed(_ value: String) {
        #expect(GRPCTimeout.nanoseconds(Array(value.utf8)) == nil)
    }

    @Test("encoding a timeout picks a unit that fits and parses back to at least the value",
          arguments: [UInt64(0), 1, 999, 1_500_000, 100_000_000_000, UInt64.max])
    func timeoutEncode(_ nanoseconds: UInt64) throws {
        let text = GRPCTimeout.encode(nanoseconds: nanoseconds)
        let parsed = try #require(GRPCTimeout.nanoseconds(Array(text.utf8)))
        #expect(parsed >= nanoseconds)
    }

    @Test("grpc-timeout reaches the request head; a malformed one is INVALID_ARGUMENT, Trailers-Only")
    func timeoutEndToEnd() throws {
        let loop = try Loopback()
        try loop.call(extra: [("grpc-timeout", "250m")])
        #expect(loop.startedHeads.first?.timeoutNanoseconds == 250_000_000)
        _ = loop.takeEvents()
        let bad = try loop.call(extra: [("grpc-timeout", "soon")])
        #expect(loop.startedHeads.isEmpty)
        let response = try #require(loop.client.responses[bad])
        #expect(response.trailers["grpc-status"] == "3")
        #expect(response.trailers["grpc-message"]?.contains("grpc-timeout") == true)
    }

    @Test("a long header value is quoted bounded in the message, with its size")
    func longValuesAreBoundedInMessages() throws {
        let loop = try Loopback()
        func message(_ stream: Int32) -> String? {
            loop.client.responses[stream]?.trailers["grpc-message"].map { GRPCPercentEncoding.decode(Array($0.utf8)) }
        }
        let timeout = try loop.call(extra: [("grpc-timeout", String(repeating: "1", count: 1000) + "S")])
        #expect(message(timeout)
            == "grpc-timeout \"\(String(repeating: "1", count: 64))…\" (1001 bytes) is malformed: expected 1 to 18 digits "
            + "and a unit H, M, S, m, u or n")
        let type = try loop.call(contentType: "text/" + String(repeating: "x", count: 300))
        #expect(message(type)
            == "content-type \"text/\(String(repeating: "x", count: 59))…\" (305 bytes) is not application/grpc or "
            + "application/grpc+proto")
    }

    @Test("spaces and tabs around a field value are trimmed, not a stream reset: authorization, grpc-timeout, metadata")
    func whitespaceAroundValues() throws {
        let loop = try Loopback()
        let id = try loop.call(extra: [("authorization", "Bearer s3cret "), ("grpc-timeout", " 5S"), ("x-tenant", "\tnorth ")])
        let head = try #require(loop.startedHeads.first)
        #expect(head.streamID == id)
        #expect(head.authorization == "Bearer s3cret")
        #expect(head.timeoutNanoseconds == 5_000_000_000)
        #expect(head.metadata.text("x-tenant") == "north")
        #expect(loop.client.responses[id]?.closeCode == nil)
    }

    @Test("-bin metadata decodes from padded and unpadded base64; text, authorization and user-agent are kept")
    func binaryMetadata() throws {
        let loop = try Loopback()
        try loop.call(extra: [("trace-bin", "AAEC/w=="), ("span-bin", "AAEC/w"), ("one-bin", "YQ"), ("x-tenant", "north"),
                              ("authorization", "Bearer s3cret"), ("user-agent", "grpc-python/1.60")])
        let head = try #require(loop.startedHeads.first)
        #expect(head.metadata.binary("trace-bin") == [0, 1, 2, 255])
        #expect(head.metadata.binary("span-bin") == [0, 1, 2, 255])
        #expect(head.metadata.binary("one-bin") == Array("a".utf8))
        #expect(head.metadata.text("x-tenant") == "north")
        #expect(head.authorization == "Bearer s3cret")
        #expect(head.metadata.text("user-agent") == "grpc-python/1.60")
        #expect(head.metadata["content-type"] == nil && head.metadata["te"] == nil && head.metadata[":path"] == nil)
    }

    @Test("base64 round trips every length, padded or not, and refuses junk")
    func base64() {
        for count in 0..<20 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            for padded in [false, true] {
                let text = Base64.encode(bytes, alphabet: .standard, padded: padded)
                #expect(Base64.decode(text.utf8, rules: .grpcBinaryMetadata) == bytes)
            }
        }
        for junk in ["A", "AB=C", "A===", "****", "YQ=", "YR", "-_8"] {
            #expect(Base64.decode(junk.utf8, rules: .grpcBinaryMetadata) == nil, "\(junk)")
        }
    }

    @Test("invalid base64 in a -bin key is INVALID_ARGUMENT, the call never starts")
    func badBinaryMetadata() throws {
        let loop = try Loopback()
        let streamID = try loop.call(extra: [("trace-bin", "not base64!")])
        #expect(loop.startedHeads.isEmpty)
        #expect(loop.client.responses[streamID]?.trailers["grpc-status"] == "3")
        // Reported for the metrics and the access log, with its path.
        guard case .refused(streamID, "/larder.v1.Test/Echo", let reason)? = loop.events.first else {
            Issue.record("no refused event: \(loop.events)")
            return
        }
        #expect(reason.code == .invalidArgument && loop.events.count == 1)
    }

    @Test("a content-type other than application/grpc(+proto) is answered HTTP 415",
          arguments: ["application/json", "application/grpc+json", "text/plain", "application/grpc-web"])
    func wrongContentType(_ contentType: String) throws {
        let loop = try Loopback()
        let streamID = try loop.call(contentType: contentType)
        #expect(loop.startedHeads.isEmpty)
        let response = try #require(loop.client.responses[streamID])
        #expect(response.headers[":status"] == "415")
        #expect(response.trailers["grpc-status"] == String(StatusCode.invalidArgument.rawValue))
        // The message names the content-type the client sent.
        let message = response.trailers["grpc-message"] ?? ""
        #expect(message.contains("content-type \"\(contentType)\" is not application/grpc"))
        #expect(response.ended)
    }

    @Test("application/grpc, application/grpc+proto and parameters are accepted",
          arguments: ["application/grpc", "application/grpc+proto", "application/grpc; charset=utf-8"])
    func rightContentType(_ contentType: String) throws {
        let loop = try Loopback()
        try loop.call(contentType: contentType)
        #expect(loop.startedHeads.first?.contentType == contentType)
    }

    @Test("te is optional")
    func noTE() throws {
        let loop = try Loopback()
        let headers = GRPCClientSession.requestHeaders(path: "/a/b").filter { $0.0 != "te" }
        let id = try #require(loop.client.startCall(headers: headers, endInput: true))
        try loop.pump()
        #expect(loop.startedHeads.first?.te == nil)
        #expect(loop.events.last == .endOfInput(streamID: id))
    }

    @Test("a GET is answered 405 without starting a call")
    func notPost() throws {
        let loop = try Loopback()
        let headers = GRPCClientSession.requestHeaders(path: "/a/b").map { $0.0 == ":method" ? (":method", "GET") : $0 }
        let id = try #require(loop.client.startCall(headers: headers, endInput: true))
        try loop.pump()
        #expect(loop.startedHeads.isEmpty)
        #expect(loop.client.responses[id]?.headers[":status"] == "405")
        #expect(loop.client.responses[id]?.headers["allow"] == "POST", "RFC 9110 §15.5.6")
        let message = loop.client.responses[id]?.trailers["grpc-message"] ?? ""
        #expect(message.contains("HTTP method GET is not POST"))
        #expect(loop.events == [.refused(streamID: id, path: "/a/b", reason: RPCError(.unimplemented,
            "HTTP method GET is not POST: gRPC calls are POST requests"))])
    }

    @Test("a request that is no gRPC call gets 405 or 415 before a malformed grpc-timeout or -bin value is looked at",
          arguments: [("GET", "application/grpc", "405"), ("POST", "text/plain", "415"), ("GET", "text/plain", "405")])
    func httpStatusComesFirst(method: String, contentType: String, status: String) throws {
        for bad in [("grpc-timeout", "soon"), ("trace-bin", "not base64!")] {
            let loop = try Loopback()
            // The malformed field comes before the content-type in the block.
            let headers = [(":method", method), (":scheme", "http"), (":path", "/a/b"), (":authority", "x"), bad,
                           ("content-type", contentType)]
            let id = try #require(loop.client.startCall(headers: headers, endInput: true))
            try loop.pump()
            #expect(loop.client.responses[id]?.headers[":status"] == status, "\(bad.0)")
            guard case .refused(id, "/a/b", _)? = loop.events.first else {
                Issue.record("no refused event: \(loop.events)")
                continue
            }
        }
    }

    @Test("percent-encoding leaves printable ASCII alone and decodes malformed escapes as they are")
    func percentEncoding() {
        #expect(GRPCPercentEncoding.encode("plain text: ok") == "plain text: ok")
        #expect(GRPCPercentEncoding.encode("100%\t") == "100%25%09")
        #expect(GRPCPercentEncoding.decode(Array("%zz%4".utf8)) == "%zz%4")
        #expect(GRPCPercentEncoding.decode(Array("a%20b%e2%82%ac".utf8)) == "a b€")
    }
}
