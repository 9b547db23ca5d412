@testable import LarderHTTP2
import LarderWire
import Testing

@Suite("gRPC over HTTP/2: limits and hostile peers")
struct GRPCLimitsTests {
    /// The debug text of the server's final GOAWAY of a drain.
    static let gracefulStop = "graceful stop: streams above the last stream id were not processed; retry them elsewhere"

    @Test("a message over the maximum size is RESOURCE_EXHAUSTED as soon as its prefix arrives")
    func oversizeMessage() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 1000
        let loop = try Loopback(server: configuration)
        let atLimit = try loop.call(message: [UInt8](repeating: 1, count: 1000))
        #expect(loop.events.contains(.message(streamID: atLimit, [UInt8](repeating: 1, count: 1000))))
        loop.server.sendTrailers(streamID: atLimit, status: .ok)
        _ = loop.takeEvents()

        let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
        loop.client.sendRaw(streamID: id, GRPCMessageDeframer.prefix(count: 1001))  // the prefix alone
        try loop.pump()
        let response = try #require(loop.client.responses[id])
        #expect(response.trailers["grpc-status"] == String(StatusCode.resourceExhausted.rawValue))
        #expect(response.trailers["grpc-message"]?.contains("1001") == true)
        #expect(loop.events.last == .cancelled(streamID: id, reason: RPCError(.resourceExhausted,
            "request message of 1001 bytes exceeds the limit of 1000 bytes")))
        // The client had not half-closed: the server resets the stream with NO_ERROR after its answer.
        #expect(response.closeCode == .noError)
        #expect(loop.server.activeStreamCount == 0)
    }

    @Test("a partial request message is counted in bufferedInputBytes until it completes or the stream ends")
    func bufferedInput() throws {
        let loop = try Loopback()
        let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
        loop.client.sendRaw(streamID: id, GRPCMessageDeframer.prefix(count: 1000) + [UInt8](repeating: 7, count: 600))
        try loop.pump()
        // The 605 bytes received, in a buffer of their size (as the allocator rounds it), not the 1000 announced.
        #expect((605...605 + 32).contains(loop.server.bufferedInputBytes), "\(loop.server.bufferedInputBytes)")
        loop.client.sendRaw(streamID: id, [UInt8](repeating: 7, count: 400))
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == 0)
        #expect(loop.events.contains(.message(streamID: id, [UInt8](repeating: 7, count: 1000))))
        loop.client.sendRaw(streamID: id, GRPCMessageDeframer.prefix(count: 1000) + [1, 2])
        try loop.pump()
        // What the buffer holds: the 7 bytes, in an allocation's smallest capacity.
        #expect((7...5 + 32).contains(loop.server.bufferedInputBytes), "\(loop.server.bufferedInputBytes)")
        loop.client.reset(streamID: id)
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == 0)
    }

    @Test("a prefix announcing 4 MiB reserves nothing: the buffer grows as the message arrives, counted whole")
    func announcedLengthIsNotReserved() throws {
        var configuration = GRPCServerConfiguration()
        configuration.maxMessageSize = 4 << 20
        let loop = try Loopback(server: configuration)
        var streams: [Int32] = []
        for _ in 0..<50 {
            let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
            loop.client.sendRaw(streamID: id, GRPCMessageDeframer.prefix(count: 4 << 20) + [1])
            streams.append(id)
        }
        try loop.pump()
        // 50 streams × 6 bytes, each in a small allocation; reserving the announced length held 200 MiB.
        #expect(loop.server.bufferedInputBytes <= 50 * (5 + 32), "\(loop.server.bufferedInputBytes)")

        // One of them sends its message in 64 KiB chunks: the count follows the buffer (at most
        // about twice what arrived), and the message arrives whole.
        let id = streams[0]
        var sent = 1
        while sent < 4 << 20 {
            let chunk = min(64 << 10, (4 << 20) - sent)
            loop.client.sendRaw(streamID: id, [UInt8](repeating: 1, count: chunk))
            try loop.pump()
            sent += chunk
            if sent < 4 << 20 {
                let held = loop.server.bufferedInputBytes - 49 * 6
                #expect(held >= sent && held <= 2 * sent + 4096, "\(held) held for \(sent) received")
            }
        }
        loop.client.endInput(streamID: id)
        try loop.pump()
        #expect(loop.events.contains(.message(streamID: id, [UInt8](repeating: 1, count: 4 << 20))))
        for id in streams.dropFirst() { loop.client.reset(streamID: id) }
        try loop.pump()
        #expect(loop.client.goaways.isEmpty)
    }

    @Test("a request that ends inside a message is INTERNAL")
    func truncatedMessage() throws {
        let loop = try Loopback()
        let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
        loop.client.sendRaw(streamID: id, GRPCMessageDeframer.prefix(count: 10) + [1, 2])
        loop.client.endInput(streamID: id)
        try loop.pump()
        #expect(loop.client.responses[id]?.trailers["grpc-status"] == String(StatusCode.internal.rawValue))
        guard case .cancelled(id, _) = loop.events.last else {
            Issue.record("events: \(loop.events)")
            return
        }
    }

    @Test("RST_STREAM from the client cancels the call and frees its slot")
    func clientReset() throws {
        let loop = try Loopback()
        let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
        loop.client.sendMessage(streamID: id, [1])
        try loop.pump()
        #expect(loop.server.activeStreamCount == 1)
        _ = loop.takeEvents()
        loop.client.reset(streamID: id)
        try loop.pump()
        #expect(loop.takeEvents() == [.cancelled(streamID: id, reason: RPCError(.cancelled, "the client cancelled the call"))])
        #expect(loop.server.activeStreamCount == 0)
        #expect(!loop.server.sendMessage(streamID: id, [1]))
    }

    @Test("a response larger than the client's window is held, then delivered as WINDOW_UPDATEs arrive")
    func flowControl() throws {
        var options = GRPCClientSession.Options()
        options.initialWindowSize = 1000
        let loop = try Loopback(client: options)
        try loop.pump()
        let id = try loop.call()
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        loop.server.sendMessage(streamID: id, big)
        loop.server.sendTrailers(streamID: id, status: .ok)
        #expect(loop.server.heldOutputBytes == big.count + 5)

        // One server turn: no more than the window goes out, the rest stays held.
        try loop.serverToClient()
        let firstTurn = loop.client.responses[id]?.dataBytes ?? 0
        #expect(firstTurn > 0 && firstTurn <= 1000)
        #expect(loop.server.heldOutputBytes == big.count + 5 - firstTurn)

        var turns = 0
        while loop.client.responses[id]?.ended != true, turns < 10_000 {
            try loop.clientToServer()  // the client's WINDOW_UPDATEs
            try loop.serverToClient()
            turns += 1
        }
        #expect(turns > 100, "the window allows about 1000 bytes per round trip")
        let response = try #require(loop.client.responses[id])
        #expect(response.messages == [big])
        #expect(response.trailers["grpc-status"] == "0")
        #expect(loop.server.heldOutputBytes == 0)
    }

    /// nghttp2 resets a stream whose DATA does not add up to its content-length (RFC 9113
    /// §8.1.1) by itself; the session counts such resets, and not its own.
    @Test("the resets nghttp2 sends on its own are counted by code; the session's own are not")
    func libraryResetsAreCounted() throws {
        let loop = try Loopback()
        let malformed = try #require(loop.client.startCall(
            headers: GRPCClientSession.requestHeaders(path: "/a/b", extra: [("content-length", "1")])))
        loop.client.sendMessage(streamID: malformed, [1, 2, 3])
        loop.client.endInput(streamID: malformed)
        try loop.pump()
        #expect(loop.client.responses[malformed]?.closeCode == .protocolError)
        #expect(loop.server.streamsResetByLibrary == [.protocolError: 1])
        let mine = try loop.call()
        loop.server.reset(streamID: mine, code: .enhanceYourCalm)
        try loop.pump()
        #expect(loop.client.responses[mine]?.closeCode == .enhanceYourCalm)
        #expect(loop.server.streamsResetByLibrary == [.protocolError: 1], "the session's own reset is not counted")
    }

    @Test("drain: GOAWAY announces it, the call in flight finishes, a GOAWAY with its id follows, then the session is done")
    func drain() throws {
        let loop = try Loopback()
        let inFlight = try loop.call()
        #expect(!loop.server.isFinished && !loop.server.awaitsDrainAcknowledgement)
        loop.server.beginDrain()
        #expect(loop.server.awaitsDrainAcknowledgement, "the client has not answered the drain's PING")
        try loop.pump()
        #expect(!loop.server.awaitsDrainAcknowledgement, "answered: the final GOAWAY went out")
        #expect(loop.client.goaways == [.init(lastStreamID: Int32.max, code: .noError),
                                         .init(lastStreamID: inFlight, code: .noError, debugText: Self.gracefulStop)])
        #expect(!loop.server.isFinished, "a call is still in flight")

        // A call the client opens now is refused (nghttp2's client does not start it after GOAWAY).
        let late = loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b"), endInput: true)
        try loop.pump()
        if let late { #expect(loop.client.responses[late]?.closeCode == .refusedStream) }
        #expect(loop.startedHeads.map(\.streamID) == [inFlight])

        loop.server.sendMessage(streamID: inFlight, [42])
        loop.server.sendTrailers(streamID: inFlight, status: .ok)
        try loop.pump()
        #expect(loop.client.responses[inFlight]?.messages == [[42]])
        #expect(loop.client.responses[inFlight]?.trailers["grpc-status"] == "0")
        #expect(loop.server.isFinished)
        #expect(loop.server.closeReason == nil)
    }

    @Test("drain whose PING is not answered in time: finishDrain sends the final GOAWAY with the last stream id all the same")
    func drainWithoutAnswer() throws {
        let loop = try Loopback()
        let inFlight = try loop.call()
        loop.server.beginDrain()
        loop.server.finishDrain()  // before any of the drain's frames reached the client
        #expect(!loop.server.awaitsDrainAcknowledgement)
        try loop.pump()
        #expect(loop.client.goaways == [.init(lastStreamID: Int32.max, code: .noError),
                                         .init(lastStreamID: inFlight, code: .noError, debugText: Self.gracefulStop)])
        loop.server.finishDrain()  // once only
        try loop.pump()
        #expect(loop.client.goaways.count == 2)
        loop.server.sendTrailers(streamID: inFlight, status: .ok)
        try loop.pump()
        #expect(loop.server.isFinished)
    }

    /// The drain's PING answer and a new request in one read (grpc core writes them so): the
    /// final GOAWAY names the last stream before it, and that request is refused REFUSED_STREAM,
    /// never started (audit 34 H1: it ran, unanswered, and the client's retry ran it twice).
    @Test("drain: a request in the same read as the PING answer, above the final GOAWAY's id, is refused, not started")
    func drainRefusesARequestAfterThePingAnswerInTheSameRead() throws {
        let server = try GRPCServerSession(configuration: GRPCServerConfiguration())
        func call(_ stream: Int32) -> [UInt8] {
            RawFrames.frame(1, flags: 0x4, stream: stream, RawFrames.request())
                + RawFrames.frame(0, flags: 0x1, stream: stream, [0, 0, 0, 0, 1, 42])
        }
        var events = try server.receive(RawFrames.start + call(1))
        var output: [UInt8] = []
        events += try server.writeOutput(into: &output)
        server.beginDrain()
        output = []
        events += try server.writeOutput(into: &output)
        let ping = try #require(scanFrames(output).first { $0.type == 6 && $0.flags & 1 == 0 }, "the drain's PING")
        events += try server.receive(RawFrames.frame(6, flags: 0x1, ping.payload) + call(3))
        output = []
        events += try server.writeOutput(into: &output)
        let started = events.compactMap { if case .requestStarted(let head) = $0 { head.streamID } else { nil } }
        #expect(started == [1], "stream 3 is not started")
        let frames = scanFrames(output)
        let goaway = try #require(frames.first { $0.type == 7 }, "the final GOAWAY")
        #expect(Array(goaway.payload[0..<8]) == [0, 0, 0, 1, 0, 0, 0, 0], "last stream id 1, NO_ERROR")
        let reset = frames.first { $0.type == 3 && $0.stream == 3 }
        #expect(reset?.payload == [0, 0, 0, 7], "RST_STREAM REFUSED_STREAM on stream 3: \(frames.map { ($0.type, $0.stream) })")
        #expect(server.streamsResetByLibrary.isEmpty, "the session's own reset")
    }

    /// One header field over nghttp2's 64 KiB cannot be decoded: the connection ends
    /// COMPRESSION_ERROR, and the reason names the likely cause instead of blaming the peer
    /// for breaking HTTP/2, which has no such limit (audit 34 L1).
    @Test("a header field over 64 KiB: GOAWAY COMPRESSION_ERROR, with a reason that says why")
    func aHeaderFieldOverNghttp2sLimit() throws {
        let server = try GRPCServerSession(configuration: GRPCServerConfiguration())
        let block = RawFrames.request() + RawFrames.literal("x-big", String(repeating: "a", count: 70_000))
        var frames: [UInt8] = []
        var offset = 0
        while offset < block.count {  // HEADERS, then CONTINUATION frames of 16,000 bytes
            let end = min(offset + 16_000, block.count)
            frames += RawFrames.frame(offset == 0 ? 1 : 9, flags: end == block.count ? 0x4 : 0, stream: 1,
                                      Array(block[offset..<end]))
            offset = end
        }
        _ = try? server.receive(RawFrames.start + frames)
        var output: [UInt8] = []
        _ = try? server.writeOutput(into: &output)
        let goaway = try #require(scanFrames(output).first { $0.type == 7 })
        #expect(Array(goaway.payload[4..<8]) == [0, 0, 0, 9], "COMPRESSION_ERROR")
        #expect(server.closeReason?.message.contains("one header field over 64 KiB") == true,
                "\(String(describing: server.closeReason))")
    }

    @Test("PINGs are answered; too many without data from us is GOAWAY ENHANCE_YOUR_CALM too_many_pings")
    func pingFlood() throws {
        let clock = ManualClock()
        let loop = try Loopback(server: .manual(clock))
        try loop.pump()
        // Spaced by more than the minimum interval: fine, however many.
        for _ in 0..<5 {
            loop.client.ping()
            try loop.pump()
            clock.advance(seconds: 301)
        }
        #expect(loop.client.pingAcks == 5 && loop.client.goaways.isEmpty)
        // Back to back: the third strike ends the connection.
        for _ in 0..<4 {
            loop.client.ping()
            try loop.pump()
        }
        #expect(loop.client.goaways.last == .init(lastStreamID: 0, code: .enhanceYourCalm, debugText: "too_many_pings"))
        #expect(loop.serverError?.code == .enhanceYourCalm)
        #expect(loop.server.closeReason?.message == "too_many_pings")
        #expect(String(decoding: scanFrames(loop.serverBytes).last { $0.type == 7 }?.payload.dropFirst(8) ?? [], as: UTF8.self)
            == "too_many_pings")
    }

    @Test("data sent between PINGs resets the strikes")
    func pingsWithData() throws {
        let clock = ManualClock()
        let loop = try Loopback(server: .manual(clock))
        for _ in 0..<6 {
            let id = try loop.call()
            loop.server.sendTrailers(streamID: id, status: .ok)
            loop.client.ping()
            try loop.pump()
        }
        #expect(loop.client.goaways.isEmpty && loop.client.pingAcks == 6)
    }

    /// A loopback whose rapid-reset bucket holds 20 resets and refills 1 a second on a clock that
    /// does not move, delivering requests whole as the server does for unary calls.
    static func resetLimitedLoop() throws -> Loopback {
        var configuration = GRPCServerConfiguration.manual(ManualClock())
        configuration.resetBurst = 20
        configuration.resetsPerSecond = 1
        let loop = try Loopback(server: configuration)
        loop.server.deliversWholeRequest = { _ in true }
        return loop
    }

    @Test("rapid reset: many requests opened and reset before they were whole is GOAWAY ENHANCE_YOUR_CALM; a few are fine")
    func rapidReset() throws {
        let loop = try Self.resetLimitedLoop()
        for round in 0..<40 {
            guard let id = loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")) else { break }
            try loop.pump()
            loop.client.reset(streamID: id)
            try loop.pump()
            if round == 10 { #expect(loop.client.goaways.isEmpty) }
        }
        #expect(loop.client.goaways.last?.code == .enhanceYourCalm)
        #expect(loop.server.closeReason?.message.contains("rapid reset") == true)
    }

    @Test("resets of started calls past their bucket hold reading until it refills; owing a whole bucket more is GOAWAY ENHANCE_YOUR_CALM")
    func rapidResetOfStartedCalls() throws {
        let clock = ManualClock()
        var configuration = GRPCServerConfiguration.manual(clock)
        configuration.maxConcurrentStreams = 10  // the bucket is at least twice this, its rate at least this
        configuration.startedResetBurst = 30
        configuration.startedResetsPerSecond = 1
        let loop = try Loopback(server: configuration)
        // Started at its headers, as a bidirectional call is (ServerReflectionInfo): never half-closed.
        loop.server.deliversWholeRequest = { _ in false }
        func openAndReset(_ count: Int) throws -> [UInt64?] {
            try (0..<count).map { _ in
                let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
                try loop.pump()
                loop.client.reset(streamID: id)
                try loop.pump()
                return loop.server.takeReadHold()
            }
        }
        #expect(try openAndReset(30).allSatisfy { $0 == nil }, "within the burst")
        // One past it: a token owed, two to wait for at 10 a second.
        #expect(try openAndReset(1) == [200_000_000])
        #expect(loop.server.takeReadHold() == nil, "a hold is taken once")
        // Three seconds repay the debt and refill 29 tokens.
        clock.advance(seconds: 3)
        #expect(try openAndReset(29).allSatisfy { $0 == nil })
        // Then each reset holds reading again, until 30 tokens are owed (the server would not
        // have read these: a client that sends so many in one read is ended).
        let holds = try openAndReset(30)
        #expect(holds.allSatisfy { $0 != nil } && holds.last == 3_100_000_000, "\(holds)")
        #expect(loop.client.goaways.isEmpty, "\(loop.client.goaways)")
        _ = try openAndReset(1)
        #expect(loop.client.goaways.last?.code == .enhanceYourCalm)
        #expect(loop.server.closeReason?.message.contains("rapid reset") == true)
    }

    @Test("messages on a streaming call beyond the bucket are GOAWAY ENHANCE_YOUR_CALM; at the bucket's rate they go on")
    func streamMessagesAreBounded() throws {
        let clock = ManualClock()
        var configuration = GRPCServerConfiguration.manual(clock)
        configuration.streamMessageBurst = 50
        configuration.streamMessagesPerSecond = 10
        let loop = try Loopback(server: configuration)
        // Started at its headers, as a bidirectional call is (ServerReflectionInfo).
        loop.server.deliversWholeRequest = { _ in false }
        let id = try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")))
        func delivered() -> Int { loop.events.filter { if case .message = $0 { true } else { false } }.count }
        // Within the burst, then at the rate: every message delivered, the connection kept.
        for _ in 0..<50 { loop.client.sendMessage(streamID: id, [1]) }
        try loop.pump()
        for _ in 0..<5 {
            clock.advance(seconds: 1)
            for _ in 0..<10 { loop.client.sendMessage(streamID: id, [2]) }
            try loop.pump()
        }
        #expect(delivered() == 100)
        #expect(loop.client.goaways.isEmpty, "\(loop.client.goaways)")
        // One read of far more (audit 32 F3: 65,000 requests held the loop for a second).
        for _ in 0..<200 { loop.client.sendMessage(streamID: id, [3]) }
        try loop.pump()
        #expect(delivered() <= 100 + 10, "\(delivered())")
        #expect(loop.client.goaways.last?.code == .enhanceYourCalm)
        #expect(loop.server.closeReason?.message.contains("too many messages on streaming calls") == true)
    }

    @Test("the started-reset bucket is never smaller than twice the streams a client may have open")
    func startedResetBucketScalesWithTheStreamLimit() throws {
        var configuration = GRPCServerConfiguration.manual(ManualClock())
        configuration.maxConcurrentStreams = 100
        configuration.startedResetBurst = 30
        configuration.startedResetsPerSecond = 1
        let loop = try Loopback(server: configuration)
        loop.server.deliversWholeRequest = { _ in false }
        for _ in 0..<2 {  // every stream it may open, cancelled, twice
            var started: [Int32] = []
            for _ in 0..<100 {
                started.append(try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b"))))
            }
            try loop.pump()
            for id in started { loop.client.reset(streamID: id, code: .cancel) }
            try loop.pump()
        }
        #expect(loop.client.goaways.isEmpty, "\(loop.client.goaways)")
        #expect(loop.server.closeReason == nil)
    }

    @Test("resets of calls the core has are not held to the tight bucket: 40 reset with a burst of 20 leave the connection serving")
    func resetsOfStartedCallsAreNotCounted() throws {
        let loop = try Self.resetLimitedLoop()
        var started: [Int32] = []
        for _ in 0..<40 { started.append(try loop.call(message: [1])) }  // whole requests: each reached the core
        #expect(loop.events.filter { if case .request = $0 { true } else { false } }.count == 40)
        for id in started { loop.client.reset(streamID: id) }
        try loop.pump()
        #expect(loop.client.goaways.isEmpty)
        #expect(loop.server.closeReason == nil)
        #expect(loop.events.filter { if case .cancelled = $0 { true } else { false } }.count == 40)
        let after = try loop.call(message: [2])
        #expect(loop.events.contains { if case .request(let head, _) = $0 { head.streamID == after } else { false } })
    }

    @Test("1,500 running calls cancelled in a burst leave the connection serving (nghttp2's own reset limit is off)")
    func manyResetsOfStartedCalls() throws {
        let loop = try Loopback()
        loop.server.deliversWholeRequest = { _ in true }
        for _ in 0..<15 {  // 100 at a time: the session's default SETTINGS_MAX_CONCURRENT_STREAMS
            var started: [Int32] = []
            for _ in 0..<100 { started.append(try loop.call(message: [1])) }
            for id in started { loop.client.reset(streamID: id, code: .cancel) }
            try loop.pump()
        }
        #expect(loop.client.goaways.isEmpty, "\(loop.client.goaways)")
        #expect(loop.server.closeReason == nil)
        #expect(loop.events.filter { if case .cancelled = $0 { true } else { false } }.count == 1_500)
        let after = try loop.call(message: [2])
        #expect(loop.events.contains { if case .request(let head, _) = $0 { head.streamID == after } else { false } })
    }

    @Test("open calls' streams count what they hold (head and stream state) until they close")
    func openCallsAreCounted() throws {
        let loop = try Loopback()
        loop.server.deliversWholeRequest = { _ in false }  // started at their headers, as streaming calls are
        try loop.pump()
        var ids: [Int32] = []
        for _ in 0..<10 {
            ids.append(try #require(loop.client.startCall(headers: GRPCClientSession.requestHeaders(path: "/a/b")
                + [("x-pad", String(repeating: "p", count: 7000))])))
        }
        try loop.pump()
        #expect(loop.server.bufferedInputBytes == 0, "not incomplete input: no frame timeout for open streams")
        let held = loop.server.openCallBytes
        #expect(held >= 10 * (7000 + GRPCServerSession.streamStateBytes) && held < 10 * 9000, "\(held)")
        for id in ids { loop.client.reset(streamID: id, code: .cancel) }
        try loop.pump()
        #expect(loop.server.openCallBytes == 0)

        // A unary request delivered whole, answered by the server: counted until its stream closes.
        loop.server.deliversWholeRequest = { _ in true }
        let unary = try loop.call(message: [1])
        #expect(loop.server.openCallBytes >= GRPCServerSession.streamStateBytes)
        #expect(loop.server.sendMessage(streamID: unary, [7]))
        #expect(loop.server.sendTrailers(streamID: unary, status: .ok))
        try loop.pump()
        #expect(loop.client.responses[unary]?.trailers["grpc-status"] == "0")
        #expect(loop.server.openCallBytes == 0)

        // A request the session refuses itself (a header list over the limit) never counts.
        _ = try loop.call(extra: [("x-big", String(repeating: "a", count: 8200))])
        #expect(loop.server.openCallBytes == 0)
    }

    @Test("a header list over 8 KiB is refused with RESOURCE_EXHAUSTED; the connection keeps serving")
    func headerListSize() throws {
        let loop = try Loopback()
        try loop.pump()
        let big = try loop.call(extra: [("x-big", String(repeating: "a", count: 8200))])
        #expect(loop.startedHeads.isEmpty)
        #expect(loop.client.responses[big]?.trailers["grpc-status"] == String(StatusCode.resourceExhausted.rawValue))
        let fits = try loop.call(extra: [("x-big", String(repeating: "a", count: 7000))])
        #expect(loop.startedHeads.map(\.streamID) == [fits])
        #expect(loop.client.goaways.isEmpty)
    }

    @Test("metadata of 40 KB that weighs what it decodes to fails its call alone: RESOURCE_EXHAUSTED, no GOAWAY")
    func bigMetadataIsNotABomb() throws {
        let loop = try Loopback()
        try loop.pump()
        // Varied text, so HPACK's Huffman coding hardly shrinks it: ~40 KB on the wire too.
        let value = String((0..<40_000).map { Character(UnicodeScalar(UInt8(33 + ($0 &* 7919) % 90))) })
        let big = try loop.call(extra: [("x-big", value)])
        #expect(loop.client.responses[big]?.trailers["grpc-status"] == String(StatusCode.resourceExhausted.rawValue))
        #expect(loop.client.goaways.isEmpty && loop.server.closeReason == nil)
        let next = try loop.call()
        #expect(loop.startedHeads.map(\.streamID) == [next])
    }

    @Test("an HPACK bomb (a header block decoding to many times the limit) ends the connection")
    func hpackBomb() throws {
        let server = try GRPCServerSession()
        // One 4000-byte header indexed into the dynamic table (RFC 7541 §6.2.1), then referenced
        // 20 times by its 1-byte index: 80 KB decoded from ~4 KB on the wire.
        let value = String(repeating: "b", count: 4000)
        var block = RawFrames.request()
        block += [0x40] + RawFrames.length(5) + Array("x-big".utf8) + RawFrames.length(value.utf8.count) + Array(value.utf8)
        block += [UInt8](repeating: 0x80 | 62, count: 20)
        let input = RawFrames.start + RawFrames.frame(1, flags: 0x5, stream: 1, block)
        #expect(throws: GRPCSessionError.self) { _ = try server.receive(input) }
        var output: [UInt8] = []
        _ = try server.writeOutput(into: &output)
        let goaway = scanFrames(output).last { $0.type == 7 }
        #expect(goaway?.payload[7] == UInt8(HTTP2ErrorCode.enhanceYourCalm.rawValue))
    }

    @Test("an HPACK bomb in a request's trailers ends the connection too")
    func hpackBombInTrailers() throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start + RawFrames.frame(1, flags: 0x4, stream: 1, RawFrames.request())
        input += RawFrames.frame(0, stream: 1, GRPCMessageDeframer.prefix(count: 0))
        // The trailers: a 4000-byte field indexed once, then referenced 20 times (80 KB decoded).
        let value = String(repeating: "b", count: 4000)
        var trailers = [0x40] + RawFrames.length(5) + Array("x-big".utf8) + RawFrames.length(value.utf8.count) + Array(value.utf8)
        trailers += [UInt8](repeating: 0x80 | 62, count: 20)
        input += RawFrames.frame(1, flags: 0x5, stream: 1, trailers)
        #expect(throws: GRPCSessionError.self) { _ = try server.receive(input) }
        var output: [UInt8] = []
        _ = try server.writeOutput(into: &output)
        let goaway = scanFrames(output).last { $0.type == 7 }
        #expect(goaway?.payload[7] == UInt8(HTTP2ErrorCode.enhanceYourCalm.rawValue))
    }

    @Test("trailers over the header list limit end their call with RESOURCE_EXHAUSTED; the connection keeps serving")
    func trailersOverTheLimit() throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start + RawFrames.frame(1, flags: 0x4, stream: 1, RawFrames.request())
        input += RawFrames.frame(0, stream: 1, GRPCMessageDeframer.prefix(count: 0))
        input += RawFrames.frame(1, flags: 0x5, stream: 1, RawFrames.literal("x-big", String(repeating: "t", count: 9000)))
        let events = try server.receive(input)
        let limit = server.configuration.maxHeaderListSize
        let size = "x-big".utf8.count + 9000 + 32
        #expect(events.last == .cancelled(streamID: 1, reason: RPCError(.resourceExhausted,
            "the request's trailers decode to \(size) bytes, over the limit of \(limit) bytes")))
        let next = try server.receive(RawFrames.frame(1, flags: 0x5, stream: 3, RawFrames.request()))
        #expect(next.contains { if case .requestStarted(let head) = $0 { head.streamID == 3 } else { false } })
    }

    @Test("a CONTINUATION flood ends the connection with ENHANCE_YOUR_CALM")
    func continuationFlood() throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start + RawFrames.frame(1, flags: 0, stream: 1, RawFrames.request())
        for index in 0..<50 { input += RawFrames.frame(9, stream: 1, RawFrames.literal("x-\(index)", "v")) }
        do {
            _ = try server.receive(input)
            Issue.record("no error")
        } catch {
            #expect(error.code == .enhanceYourCalm)
            #expect(error.message.contains("CONTINUATION"))
        }
    }

    @Test("a SETTINGS flood ends the connection with ENHANCE_YOUR_CALM")
    func settingsFlood() throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start
        for _ in 0..<500 { input += RawFrames.frame(4) }
        #expect(throws: GRPCSessionError(.enhanceYourCalm, "too many SETTINGS frames")) { _ = try server.receive(input) }
    }

    @Test("a flood of empty DATA frames ends the connection")
    func emptyDataFlood() throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start + RawFrames.frame(1, flags: 0x4, stream: 1, RawFrames.request())
        for _ in 0..<2000 { input += RawFrames.frame(0, stream: 1) }
        #expect(throws: GRPCSessionError.self) { _ = try server.receive(input) }
    }

    @Test("DATA frames holding only padding count as frames that carry no work", arguments: [0, 7] as [UInt8])
    func paddingOnlyDataFlood(padding: UInt8) throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start + RawFrames.frame(1, flags: 0x4, stream: 1, RawFrames.request())
        // PADDED (0x8): a Pad Length byte, no data, `padding` zero bytes.
        for _ in 0..<1100 { input += RawFrames.frame(0, flags: 0x8, stream: 1, [padding] + Array(repeating: 0, count: Int(padding))) }
        #expect(throws: GRPCSessionError(.enhanceYourCalm,
                                         "too many frames that carry no work (empty or padding-only DATA, PRIORITY)")) {
            _ = try server.receive(input)
        }
    }

    @Test("padded DATA that carries data is not counted")
    func paddedDataWithBytes() throws {
        let server = try GRPCServerSession()
        var input = RawFrames.start + RawFrames.frame(1, flags: 0x4, stream: 1, RawFrames.request())
        // 1,096 padded frames: the message's prefix, then one byte of it each (1,095 bytes).
        input += RawFrames.frame(0, flags: 0x8, stream: 1, [2, 0, 0, 0, 4, 0x47, 0, 0])
        for _ in 0..<1_095 { input += RawFrames.frame(0, flags: 0x8, stream: 1, [1, 0x41, 0]) }
        input += RawFrames.frame(0, flags: 0x1, stream: 1)
        let events = try server.receive(input)
        let messages = events.compactMap { if case .message(_, let bytes) = $0 { bytes } else { nil } }
        #expect(messages == [Array(repeating: 0x41, count: 1_095)] && server.closeReason == nil, "\(events.count) events")
    }

    @Test("garbage instead of the preface is a clean PROTOCOL_ERROR, and receive keeps refusing")
    func garbage() throws {
        let server = try GRPCServerSession()
        let junk: [UInt8] = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(throws: GRPCSessionError.self) { _ = try server.receive(junk) }
        #expect(throws: GRPCSessionError.self) { _ = try server.receive(junk) }
        var output: [UInt8] = []
        _ = try server.writeOutput(into: &output)
        #expect(server.closeReason?.code == .protocolError)
    }

    @Test("garbage frames after a good preface end in a GOAWAY, not a crash", arguments: 0..<20)
    func garbageFrames(_ seed: Int) throws {
        let server = try GRPCServerSession()
        var random = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        var junk: [UInt8] = []
        for _ in 0..<2000 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            junk.append(UInt8(truncatingIfNeeded: random >> 33))
        }
        var output: [UInt8] = []
        do {
            _ = try server.receive(RawFrames.start + junk)
        } catch {
            #expect(server.closeReason != nil)
        }
        _ = try server.writeOutput(into: &output)
        #expect(scanFrames(output).contains { $0.type == 7 } || server.closeReason == nil)
    }
}
