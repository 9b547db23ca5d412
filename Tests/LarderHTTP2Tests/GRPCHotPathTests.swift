@testable import LarderHTTP2
import LarderWire
import Testing

/// The allocation-saving parts of the server session's per-call path: the reused header block,
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

    @Test("a header block is reused from request to request without keeping old fields")
    func headerBlockReuse() {
        var block = HTTP2HeaderBlock()
        func add(_ name: String, _ value: String) {
            Array(name.utf8).withUnsafeBytes { n in Array(value.utf8).withUnsafeBytes { v in block.append(name: n, value: v) } }
        }
        func fields() -> [String] {
            block.withFields { $0.map { String(decoding: $0.name, as: UTF8.self) + "=" + String(decoding: $0.value, as: UTF8.self) } }
        }
        block.begin(streamID: 1)
        add(":path", "/a")
        add("x", "")
        #expect(fields() == [":path=/a", "x="])
        block.begin(streamID: 3)
        add("", "v")
        #expect(fields() == ["=v"])
        block.clear()
        #expect(block.isEmpty && fields().isEmpty)
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
        #expect(throws: GRPCMessageDeframer.TooLarge(length: 11, limit: 10)) {
            try wire.withUnsafeBytes { try deframer.append($0, into: &received) }
        }
        #expect(received.isEmpty)
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
