@testable import LarderHTTP2
import LarderWire
import Testing

@Suite("gRPC over HTTP/2: calls end to end through bytes")
struct GRPCUnaryCallTests {
    @Test("a unary call: headers, a message split over DATA frames, the reply and trailers")
    func unary() throws {
        var options = GRPCClientSession.Options()
        options.maxDataChunk = 7
        let loop = try Loopback(client: options)
        let request = (0..<100).map { UInt8($0) }
        let streamID = try loop.call("/larder.v1.Items/GetItem", extra: [("x-user", "ada")], message: request)

        let dataFrames = scanFrames(loop.clientBytes).filter { $0.type == 0 && $0.stream == streamID }
        #expect(dataFrames.count >= 15, "105 bytes in chunks of 7")
        let events = loop.takeEvents()
        guard events.count == 3, case .requestStarted(let head) = events[0] else {
            Issue.record("events: \(events)")
            return
        }
        #expect(head.streamID == streamID)
        #expect(head.path == "/larder.v1.Items/GetItem")
        #expect(head.contentType == "application/grpc")
        #expect(head.te == "trailers")
        #expect(head.metadata.text("x-user") == "ada")
        #expect(head.timeoutNanoseconds == nil)
        #expect(events[1] == .message(streamID: streamID, request))
        #expect(events[2] == .endOfInput(streamID: streamID))

        let reply: [UInt8] = Array("reply".utf8)
        #expect(loop.server.sendHeaders(streamID: streamID, metadata: [.init("x-served-by", .text("larder"))]))
        #expect(loop.server.sendMessage(streamID: streamID, reply))
        #expect(loop.server.sendTrailers(streamID: streamID, status: .ok))
        try loop.pump()

        let response = try #require(loop.client.responses[streamID])
        #expect(response.headers[":status"] == "200")
        #expect(response.headers["content-type"] == "application/grpc")
        #expect(response.headers["x-served-by"] == "larder")
        #expect(response.messages == [reply])
        #expect(response.trailers["grpc-status"] == "0")
        #expect(response.trailers["grpc-message"] == nil)
        #expect(response.ended && response.closeCode == .noError)
        #expect(loop.server.activeStreamCount == 0 && loop.server.heldOutputBytes == 0)
        #expect(loop.takeEvents().isEmpty)
    }

    @Test("an error before any message is a Trailers-Only response in one HEADERS frame")
    func trailersOnly() throws {
        let loop = try Loopback()
        let streamID = try loop.call()
        #expect(loop.server.sendTrailers(streamID: streamID, status: .notFound, message: "item \"x\" not found"))
        let before = loop.serverBytes.count
        try loop.pump()
        let frames = scanFrames(Array(loop.serverBytes[before...])).filter { $0.stream == streamID }
        #expect(frames.count == 1 && frames.first?.type == 1 && (frames.first?.flags ?? 0) & 1 == 1)
        let response = try #require(loop.client.responses[streamID])
        #expect(response.headers[":status"] == "200")
        #expect(response.trailers["grpc-status"] == "5")
        #expect(GRPCPercentEncoding.decode(Array((response.trailers["grpc-message"] ?? "").utf8)) == "item \"x\" not found")
        #expect(response.messages.isEmpty)
    }

    @Test("a status message with non-ASCII and % goes out percent-encoded and decodes back")
    func percentEncodedMessage() throws {
        let loop = try Loopback()
        let streamID = try loop.call()
        let text = "50% off: crème brûlée\nline 2 — 日本"
        loop.server.sendMessage(streamID: streamID, [9])
        loop.server.sendTrailers(streamID: streamID, status: .invalidArgument, message: text)
        try loop.pump()
        let wire = try #require(loop.client.responses[streamID]?.trailers["grpc-message"])
        #expect(wire.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E })
        #expect(wire.hasPrefix("50%25 off: cr%C3%A8me"))
        #expect(GRPCPercentEncoding.decode(Array(wire.utf8)) == text)
        #expect(loop.client.responses[streamID]?.trailers["grpc-status"] == "3")
        #expect(loop.client.responses[streamID]?.messages == [[9]])
    }

    @Test("sending on a stream that is gone or answered does nothing and says so")
    func sendAfterEnd() throws {
        let loop = try Loopback()
        let streamID = try loop.call()
        #expect(loop.server.sendTrailers(streamID: streamID, status: .ok))
        #expect(!loop.server.sendMessage(streamID: streamID, [1]))
        #expect(!loop.server.sendTrailers(streamID: streamID, status: .ok))
        try loop.pump()
        #expect(!loop.server.sendHeaders(streamID: streamID))
        #expect(!loop.server.sendMessage(streamID: 99, [1]))
    }

    @Test("SETTINGS_MAX_CONCURRENT_STREAMS bounds the calls in flight; the next starts when one ends")
    func concurrentStreams() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxConcurrentStreams = 2
        let loop = try Loopback(server: configuration)
        try loop.pump()  // exchange SETTINGS first, as a client does before it sends requests
        var ids: [Int32] = []
        for _ in 0..<3 {
            let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
            loop.client.sendMessage(streamID: id, [1])
            loop.client.endInput(streamID: id)
            ids.append(id)
        }
        try loop.pump()
        #expect(loop.startedHeads.map(\.streamID) == Array(ids.prefix(2)))
        _ = loop.takeEvents()
        loop.server.sendTrailers(streamID: ids[0], status: .ok)
        try loop.pump()
        #expect(loop.startedHeads.map(\.streamID) == [ids[2]])
    }

    @Test("the same client bytes fed one byte at a time give the same events")
    func bytewise() throws {
        let loop = try Loopback()
        try loop.call(extra: [("grpc-timeout", "3S")], message: Array(0..<50))
        let expected = loop.takeEvents()
        let server = try GRPCServerSession()
        var events: [GRPCServerEvent] = []
        for byte in loop.clientBytes { events += try server.receive([byte]) }
        #expect(events == expected)
        #expect(expected.count == 3)
    }

    @Test("the core can reset a call, and close a connection with a GOAWAY of its choosing")
    func resetAndClose() throws {
        let loop = try Loopback()
        let first = try loop.call()
        loop.server.reset(streamID: first)
        try loop.pump()
        #expect(loop.client.responses[first]?.closeCode == .cancel)
        #expect(loop.server.activeStreamCount == 0)
        #expect(loop.takeEvents().filter { if case .cancelled = $0 { true } else { false } }.isEmpty)

        let second = try loop.call()
        loop.server.close(code: .noError, message: "idle for 300 s")
        try loop.pump()
        #expect(loop.client.goaways.last == .init(lastStreamID: second, code: .noError, debugText: "idle for 300 s"))
        #expect(throws: GRPCSessionError(.noError, "idle for 300 s")) { _ = try loop.server.receive([0]) }
    }
}
