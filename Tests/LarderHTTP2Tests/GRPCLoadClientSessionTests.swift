@testable import LarderHTTP2
import LarderWire
import Testing

/// The load generator's client session against the server session, joined in memory.
@Suite("gRPC over HTTP/2: the load client session")
struct GRPCLoadClientSessionTests {
    /// A load client and a server session, bytes pumped both ways until both are quiet.
    final class Pair {
        let server: GRPCServerSession
        let client: GRPCLoadClientSession
        var events: [GRPCServerEvent] = []
        var completions: [GRPCLoadClientSession.Completion] = []

        init(server configuration: GRPCServerConfiguration = GRPCServerConfiguration()) throws {
            server = try GRPCServerSession(configuration: configuration)
            client = try GRPCLoadClientSession()
        }

        func pump() throws {
            for _ in 0..<1000 {
                var toServer: [UInt8] = []
                try client.writeOutput { toServer.append(contentsOf: $0) }
                if !toServer.isEmpty { events += try server.receive(toServer) }
                var toClient: [UInt8] = []
                events += try server.writeOutput(into: &toClient)
                if !toClient.isEmpty { try receive(toClient) }
                client.takeCompletions { completions.append($0) }
                if toServer.isEmpty && toClient.isEmpty { return }
            }
        }

        private func receive(_ bytes: [UInt8]) throws {
            let client = client
            try bytes.withUnsafeBytes { raw in try client.receive(raw) }
        }

        /// The heads and messages of the requests the server has seen start, in order.
        var started: [(head: GRPCRequestHead, message: [UInt8]?)] {
            var heads: [GRPCRequestHead] = []
            var messages: [Int32: [UInt8]] = [:]
            for event in events {
                switch event {
                case .requestStarted(let head): heads.append(head)
                case .message(let streamID, let bytes): messages[streamID] = bytes
                default: break
                }
            }
            return heads.map { ($0, messages[$0.streamID]) }
        }
    }

    @Test("many calls in flight on one connection: headers and metadata as prepared, each status to its tag")
    func manyCalls() throws {
        let pair = try Pair()
        let headers = GRPCRequestHeaderBlock(path: "/larder.v1.Items/GetItem",
                                             metadata: [("Authorization", "Bearer t0k"), ("x-trace-bin", "\u{1}\u{2}")])
        let message: [UInt8] = [0x0A, 3, 0x61, 0x62, 0x63]
        let body = GRPCLoadClientSession.body(message: message)
        #expect(body == [0, 0, 0, 0, 5] + message)
        for tag in 0..<20 { #expect(pair.client.startCall(headers, body: body, tag: tag, captureReply: tag == 3)) }
        #expect(pair.client.inFlight == 20)
        try pair.pump()

        let started = pair.started
        #expect(started.count == 20)
        for (head, request) in started {
            #expect(head.path == "/larder.v1.Items/GetItem")
            #expect(head.contentType == "application/grpc" && head.te == "trailers")
            #expect(head.metadata.text("authorization") == "Bearer t0k")
            #expect(request == message)
        }
        // Answer in reverse order, with a mix of outcomes.
        for (index, (head, _)) in started.enumerated().reversed() {
            switch index % 4 {
            case 0, 3:
                #expect(pair.server.sendMessage(streamID: head.streamID, [0x0A, 36] + Array(repeating: 0x41, count: 36)
                    + Array(repeating: 0x42, count: 100)))
                #expect(pair.server.sendTrailers(streamID: head.streamID, status: .ok))
            case 1:
                #expect(pair.server.sendTrailers(streamID: head.streamID, status: .notFound, message: "50% \"x\" gone"))
            default:
                pair.server.reset(streamID: head.streamID, code: .refusedStream)
            }
        }
        try pair.pump()
        #expect(pair.client.inFlight == 0)
        #expect(pair.completions.count == 20)
        #expect(pair.completions.map(\.tag).sorted() == Array(0..<20))
        for completion in pair.completions {
            switch completion.tag % 4 {
            case 0, 3:
                #expect(completion.status == .ok && completion.message == nil, "\(completion.status) \(completion.message ?? "")")
                // Only the call that asked keeps the first bytes of its reply (64 by default).
                #expect(completion.reply == (completion.tag == 3 ? [0x0A, 36] + Array(repeating: 0x41, count: 36)
                    + Array(repeating: 0x42, count: 26) : []))
            case 1:
                #expect(completion.status == .notFound && completion.message == "50% \"x\" gone")
            default:
                #expect(completion.status == .unavailable)
                #expect(completion.message == "stream reset by the server: REFUSED_STREAM")
            }
        }
    }

    @Test("a compressed request ends with the status and message the server gave it")
    func statuses() throws {
        let pair = try Pair()
        let headers = GRPCRequestHeaderBlock(path: "/a/b")
        var compressed = GRPCLoadClientSession.body(message: [1, 2, 3])
        compressed[0] = 1
        #expect(pair.client.startCall(headers, body: compressed, tag: 7))
        try pair.pump()
        #expect(pair.completions.count == 1)
        #expect(pair.completions.first?.tag == 7)
        #expect(pair.completions.first?.status == .internal)
        #expect(pair.completions.first?.message == "a message has the compressed flag set but the request declared no grpc-encoding")
    }

    @Test("the server's GOAWAY is recorded; no call starts after it")
    func goaway() throws {
        let pair = try Pair()
        let headers = GRPCRequestHeaderBlock(path: "/a/b")
        #expect(pair.client.startCall(headers, body: GRPCLoadClientSession.body(message: []), tag: 0))
        try pair.pump()
        pair.server.close(code: .enhanceYourCalm, message: "too many pings")
        try pair.pump()
        #expect(pair.client.goaways.last?.code == .enhanceYourCalm)
        #expect(!pair.client.startCall(headers, body: GRPCLoadClientSession.body(message: []), tag: 1))
        #expect(pair.client.inFlight == 1, "the call in flight is the loop's to count when the socket closes")
    }

    /// A frame over the client's SETTINGS_MAX_FRAME_SIZE (16 KiB): nghttp2 ends the session with
    /// a GOAWAY of its own, and the session says so (audit 14: the bench waited out its time limit).
    @Test("a session nghttp2 ended by itself is finished, with the GOAWAY it sent as the reason")
    func libraryEndedSession() throws {
        let pair = try Pair()
        #expect(pair.client.startCall(GRPCRequestHeaderBlock(path: "/a/b"), body: GRPCLoadClientSession.body(message: []),
                                      tag: 0))
        try pair.pump()
        #expect(!pair.client.isFinished)
        // A DATA frame of 20,000 bytes on stream 1: over the 16,384 the client allows.
        let length = 20_000
        var frame: [UInt8] = [UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF), 0x0, 0x0, 0, 0, 0, 1]
        frame += [UInt8](repeating: 0, count: length)
        let client = pair.client
        try? frame.withUnsafeBytes { raw in try client.receive(raw) }
        var sent: [UInt8] = []
        try client.writeOutput { sent.append(contentsOf: $0) }
        #expect(sent.count >= 17 && sent[3] == 0x7, "a GOAWAY went out")
        #expect(client.isFinished)
        #expect(client.lastLibraryError?.contains("FRAME_SIZE_ERROR") == true, "\(String(describing: client.lastLibraryError))")
    }
}
