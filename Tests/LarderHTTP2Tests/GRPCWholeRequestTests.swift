@testable import LarderHTTP2
import LarderWire
import Testing

/// The session's whole-request mode (`deliversWholeRequest`), as the server uses it for every
/// method but a bidirectional one: one `.request` event at the half-close, and the requests
/// that do not bring exactly one message answered by the session alone.
@Suite("gRPC over HTTP/2: requests delivered whole")
struct GRPCWholeRequestTests {
    static func loopback() throws -> Loopback {
        let loop = try Loopback()
        loop.server.deliversWholeRequest = { !$0.path.hasSuffix("/Stream") }
        return loop
    }

    static func start(_ loop: Loopback, _ path: String = "/larder.v1.Test/Echo") throws -> Int32 {
        let headers = GRPCClientSession.requestHeaders(path: path)
        return try #require(loop.client.startCall(headers: headers))
    }

    @Test func aRequestIsOneEventAtItsHalfCloseHoweverItsPiecesCame() throws {
        let loop = try Self.loopback()
        let id = try Self.start(loop)
        try loop.pump()
        #expect(loop.events.isEmpty)  // headers alone: nothing for the core yet
        // The head is held, and counted for the memory budget (its decoded header list).
        let head = loop.server.bufferedInputBytes
        #expect(head > 100)
        loop.client.sendMessage(streamID: id, [7, 8])
        try loop.pump()
        #expect(loop.events.isEmpty)  // the message is held too
        #expect(loop.server.bufferedInputBytes == head + 2)
        loop.client.endInput(streamID: id)
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == 0)
        let events = loop.takeEvents()
        #expect(events.count == 1)
        guard case .request(let head, let message)? = events.first else {
            Issue.record("expected one .request, got \(events)")
            return
        }
        #expect(head.streamID == id && head.path == "/larder.v1.Test/Echo" && message == [7, 8])
        #expect(loop.server.sendMessage(streamID: id, [9]) && loop.server.sendTrailers(streamID: id, status: .ok))
        try loop.pump()
        #expect(loop.client.responses[id]?.messages == [[9]])
        #expect(loop.server.activeStreamCount == 0)
    }

    @Test func aHeldHeadIsCountedUntilItsRequestIsDeliveredAnsweredOrReset() throws {
        let loop = try Self.loopback()
        // Headers that never bring their message: each stream's head stays counted.
        let big = String(repeating: "m", count: 3000)
        let first = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/larder.v1.Test/Echo")
            + [("x-pad", big)]))
        let second = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/larder.v1.Test/Echo")
            + [("x-pad", big)]))
        try loop.pump()
        let both = loop.server.bufferedInputBytes
        #expect(both > 6000)
        // Delivered: the first's head goes to the core, off the session's books.
        loop.client.sendMessage(streamID: first, [1])
        loop.client.endInput(streamID: first)
        try loop.pump()
        #expect(loop.server.bufferedInputBytes < both / 2 + 100 && loop.server.bufferedInputBytes > 3000)
        // Reset by the client: the second's is given back too.
        loop.client.reset(streamID: second)
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == 0)
        // Answered by the session before it was delivered (no message): likewise.
        let third = try Self.start(loop)
        loop.client.endInput(streamID: third)
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == 0)
    }

    @Test func aPathItSaysNoToStreamsItsMessagesAsBefore() throws {
        let loop = try Self.loopback()
        let id = try Self.start(loop, "/larder.v1.Test/Stream")
        loop.client.sendMessage(streamID: id, [1])
        loop.client.sendMessage(streamID: id, [2])
        loop.client.endInput(streamID: id)
        try loop.pump()
        #expect(loop.startedHeads.map(\.streamID) == [id])
        let messages = loop.events.compactMap { if case .message(_, let bytes) = $0 { bytes } else { nil } }
        #expect(messages == [[1], [2]])
        #expect(loop.events.last == .endOfInput(streamID: id))
    }

    @Test func noMessageOrTwoAreAnsweredByTheSessionAndOnlyReported() throws {
        let loop = try Self.loopback()
        let none = try Self.start(loop)
        loop.client.endInput(streamID: none)
        let two = try Self.start(loop)
        loop.client.sendMessage(streamID: two, [1])
        loop.client.sendMessage(streamID: two, [2])
        loop.client.endInput(streamID: two)
        try loop.pump()
        // Nothing for the core to run, only the refusals to count.
        #expect(loop.events == [
            .refused(streamID: none, path: "/larder.v1.Test/Echo",
                     reason: RPCError(.internal, "the request ended without a message: /larder.v1.Test/Echo takes one")),
            .refused(streamID: two, path: "/larder.v1.Test/Echo",
                     reason: RPCError(.internal, "/larder.v1.Test/Echo takes one request message: send exactly one")),
        ])
        let noneTrailers = loop.client.responses[none]?.trailers ?? [:]
        #expect(noneTrailers["grpc-status"] == String(StatusCode.internal.rawValue))
        #expect(noneTrailers["grpc-message"]?.contains("ended without a message") == true)
        let twoTrailers = loop.client.responses[two]?.trailers ?? [:]
        #expect(twoTrailers["grpc-status"] == String(StatusCode.internal.rawValue))
        #expect(twoTrailers["grpc-message"]?.contains("send exactly one") == true)
        #expect(loop.server.activeStreamCount == 0)
        #expect(loop.server.bufferedInputBytes == 0)
    }

    @Test func aResetOrAnOversizeMessageBeforeTheEndTellsTheCoreNothing() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 16
        let loop = try Loopback(server: configuration)
        loop.server.deliversWholeRequest = { _ in true }
        let reset = try Self.start(loop)
        try loop.pump()
        let head = loop.server.bufferedInputBytes  // its head, held with it
        loop.client.sendMessage(streamID: reset, [1])
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == head + 1)
        loop.client.reset(streamID: reset)
        let big = try Self.start(loop)
        loop.client.sendMessage(streamID: big, Array(repeating: 0, count: 64))
        try loop.pump()
        // No .cancelled for calls the core never had: the reset one is forgotten, the oversize
        // one only reported as refused.
        #expect(loop.events == [.refused(streamID: big, path: "/larder.v1.Test/Echo",
                                         reason: RPCError(.resourceExhausted, "request message of 64 bytes exceeds the limit of 16 bytes"))])
        let bigStatus = loop.client.responses[big]?.trailers["grpc-status"]
        #expect(bigStatus == String(StatusCode.resourceExhausted.rawValue))
        #expect(loop.server.activeStreamCount == 0)
        #expect(loop.server.bufferedInputBytes == 0)
    }
}
