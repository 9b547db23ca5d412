@testable import LarderHTTP2
import LarderWire
import Testing

/// The allocation-saving parts of the server session's per-call path: the reused header parser,
/// the string cache, the deframer's in-place path and pre-framed replies.
@Suite("gRPC over HTTP/2: the per-call fast paths")
struct GRPCHotPathTests {
    @Test("more distinct paths, authorities and metadata than the string cache holds all come through exactly")
    func stringCacheChurn() throws {
        let loop = try Loopback()
        // Three passes over 40 values (more than the cache's 16 entries): later passes hit or evict.
        for pass in 0..<3 {
            for index in 0..<40 {
                let path = "/larder.v1.Test/Method\(index)"
                try loop.call(path, extra: [("user-agent", "agent-\(index)"), ("x-\(index % 20)", "v\(pass)-\(index)")])
                let heads = loop.startedHeads
                let head = try #require(heads.last)
                #expect(heads.count == 1)
                #expect(head.path == path)
                #expect(head.authority == "localhost")
                #expect(head.metadata.text("user-agent") == "agent-\(index)")
                #expect(head.metadata.text("x-\(index % 20)") == "v\(pass)-\(index)")
                #expect(head.metadata.entries.count == 2)
                #expect(loop.server.sendTrailers(streamID: head.streamID, status: .ok))
                _ = loop.takeEvents()
                try loop.pump()
            }
        }
        #expect(loop.server.activeStreamCount == 0)
    }

    @Test("the cache repairs invalid UTF-8 as String(decoding:) does, and never mixes up values of one length")
    func stringCacheValues() {
        var cache = HTTP2StringCache()
        let values: [[UInt8]] = [Array("abc".utf8), Array("abd".utf8), [0x61, 0xFF, 0x62], Array("abc".utf8), [], [0x61, 0xFF, 0x62]]
        for value in values {
            let made = value.withUnsafeBytes { cache.string($0) }
            #expect(made == String(decoding: value, as: UTF8.self))
        }
    }

    @Test("the header parser is reused from request to request without keeping old fields")
    func headerParserReuse() throws {
        var parser = GRPCRequestHeadParser()
        var strings = HTTP2StringCache()
        func add(_ name: String, _ value: String) {
            Array(name.utf8).withUnsafeBytes { n in
                Array(value.utf8).withUnsafeBytes { v in parser.add(name: n, value: v, strings: &strings) }
            }
        }
        func request(_ path: String, _ extra: [(String, String)]) {
            for (name, value) in [(":method", "POST"), (":path", path), ("content-type", "application/grpc")] + extra {
                add(name, value)
            }
        }
        parser.begin(streamID: 1)
        request("/a", [("x-one", "1"), ("grpc-timeout", "5S")])
        let first = try parser.finish().get()
        #expect(first.streamID == 1 && first.path == "/a" && first.timeoutNanoseconds == 5_000_000_000)
        #expect(first.metadata.entries.count == 1 && first.metadata.text("x-one") == "1")

        parser.begin(streamID: 3)
        request("/b", [])
        let second = try parser.finish().get()
        #expect(second.streamID == 3 && second.path == "/b" && second.timeoutNanoseconds == nil)
        #expect(second.metadata.isEmpty)
        #expect(first.metadata.text("x-one") == "1")  // the first head kept its own

        // A block over the size limit keeps nothing, not even its method.
        parser.begin(streamID: 5)
        request("/c", [("x-big", "v")])
        parser.discard()
        add("x-after", "w")
        #expect(parser.streamID == 5)
        guard case .failure(let rejection) = parser.finish() else {
            Issue.record("a discarded block made a request")
            return
        }
        #expect(rejection.httpStatus == 405)

        // The first malformed field decides, whatever follows it.
        parser.begin(streamID: 7)
        request("/d", [("grpc-timeout", "forever"), ("x-bad-bin", "!!!")])
        guard case .failure(let malformed) = parser.finish() else {
            Issue.record("a malformed grpc-timeout was accepted")
            return
        }
        #expect(malformed.error.code == .invalidArgument && malformed.error.message.contains("grpc-timeout"))
    }

    @Test("messages come out whole however DATA cuts them, several per chunk or one byte at a time",
          arguments: [1, 2, 4, 5, 6, 9, 64])
    func deframerChunks(_ chunk: Int) throws {
        let messages: [[UInt8]] = [[], [1], Array(repeating: 7, count: 300), [2, 3], []]
        var wire: [UInt8] = []
        for message in messages {
            GRPCMessageFraming.appendPrefix(count: message.count, to: &wire)
            wire += message
        }
        var deframer = GRPCMessageDeframer(maxMessageSize: 1000)
        var received: [GRPCMessageDeframer.Message] = []
        var offset = 0
        while offset < wire.count {
            let end = min(offset + chunk, wire.count)
            try wire[offset..<end].withUnsafeBytes { try deframer.append($0, into: &received) }
            offset = end
        }
        #expect(received.map(\.bytes) == messages)
        #expect(received.allSatisfy { !$0.compressed })
        #expect(deframer.isAtMessageBoundary && deframer.bufferedBytes == 0)
    }

    @Test("an oversize message fails on its prefix on the in-place path too")
    func deframerLimitInPlace() {
        var deframer = GRPCMessageDeframer(maxMessageSize: 10)
        var wire: [UInt8] = []
        GRPCMessageFraming.appendPrefix(count: 11, to: &wire)
        wire += Array(repeating: 0, count: 11)
        var received: [GRPCMessageDeframer.Message] = []
        #expect(throws: GRPCMessageDeframer.Failure.tooLarge(length: 11, limit: 10)) {
            try wire.withUnsafeBytes { try deframer.append($0, into: &received) }
        }
        #expect(received.isEmpty)
    }

    @Test("a Compressed-Flag byte other than 0 or 1 fails on its prefix, whole or split", arguments: [2, 0x80, 0xFE, 0xFF] as [UInt8])
    func deframerRejectsOtherFlags(flag: UInt8) {
        let wire: [UInt8] = [flag, 0, 0, 0, 2, 8, 1]
        for split in [wire.count, 1, 3] {  // the prefix read in place, and gathered from pieces
            var deframer = GRPCMessageDeframer(maxMessageSize: 10)
            var received: [GRPCMessageDeframer.Message] = []
            #expect(throws: GRPCMessageDeframer.Failure.badFlag(flag)) {
                try wire[..<split].withUnsafeBytes { try deframer.append($0, into: &received) }
                try wire[split...].withUnsafeBytes { try deframer.append($0, into: &received) }
            }
            #expect(received.isEmpty)
        }
        var deframer = GRPCMessageDeframer(maxMessageSize: 10)
        var received: [GRPCMessageDeframer.Message] = []
        #expect(throws: Never.self) {
            try ([1, 0, 0, 0, 1, 9, 0, 0, 0, 0, 1, 7] as [UInt8]).withUnsafeBytes { try deframer.append($0, into: &received) }
        }
        #expect(received == [.init(compressed: true, bytes: [9]), .init(compressed: false, bytes: [7])])
    }

    @Test("a pre-framed reply goes out as the same message, after the record's first byte")
    func framedReply() throws {
        let loop = try Loopback()
        let streamID = try loop.call()
        var record: [UInt8] = [0xEE]
        GRPCMessageFraming.appendPrefix(count: 3, to: &record)
        record += [4, 5, 6]
        #expect(GRPCMessageFraming.isFramed(record, at: 1) && !GRPCMessageFraming.isFramed(record, at: 0))
        #expect(loop.server.sendFramedMessage(streamID: streamID, record, from: 1))
        #expect(loop.server.sendMessage(streamID: streamID, [7]))
        #expect(loop.server.sendTrailers(streamID: streamID, status: .ok))
        try loop.pump()
        let response = try #require(loop.client.responses[streamID])
        #expect(response.messages == [[4, 5, 6], [7]])
        #expect(response.trailers["grpc-status"] == "0")
        #expect(loop.server.heldOutputBytes == 0 && loop.server.activeStreamCount == 0)
        #expect(!loop.server.sendFramedMessage(streamID: streamID, record, from: 1), "the stream is over")
    }
}
