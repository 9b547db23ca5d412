import LarderHTTP2

/// Seeds of the `http2` target: byte 0 (piece sizes) and what a client sent, captured from
/// `GRPCClientSession` talking to a `GRPCServerSession` with the echo responder, plus hand-built
/// hostile streams.
extension FuzzSeeds {
    static var http2: [Seed] {
        let unary = capture { client in
            call(client, extra: [("grpc-timeout", "250m"), ("x-user", "ada")], messages: [[1, 2, 3]])
        }
        let metadata = capture { client in
            call(client, extra: [("trace-bin", "AAEC/w=="), ("span-bin", "AAEC/w"), ("authorization", "Bearer t")],
                 messages: [Array("hello".utf8)])
        }
        let split = capture(chunk: 7) { client in call(client, messages: [[UInt8](repeating: 0x5A, count: 300), []]) }
        let several = capture { client in
            for index in 0..<4 { call(client, path: "/larder.v1.Test/M\(index)", messages: [[UInt8(index)]]) }
        }
        var opened: Int32?
        let reset = capture({ client in opened = call(client, messages: [[1]], endInput: false) },
                            { client in if let opened { client.reset(streamID: opened) } })
        // A bidirectional call (the reflection stream's shape): many messages, then a reset mid-stream.
        var streaming: Int32?
        let streamReset = capture({ client in
            streaming = call(client, path: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                             messages: (0..<20).map { [0x3A, 0x00, UInt8($0)] }, endInput: false)
        }, { client in if let streaming { client.reset(streamID: streaming) } })
        // gzip and deflate (zlib) of "larder " × 50, made by Python's gzip and zlib modules.
        let gzipped: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x49, 0x2c, 0x4a,
                                0x49, 0x2d, 0x52, 0xc8, 0x19, 0xa5, 0x68, 0x41, 0x01, 0x00, 0xfa, 0x34, 0x44, 0xf8,
                                0x5e, 0x01, 0x00, 0x00]
        let deflated: [UInt8] = [0x78, 0x9c, 0xcb, 0x49, 0x2c, 0x4a, 0x49, 0x2d, 0x52, 0xc8, 0x19, 0xa5, 0x68, 0x41,
                                 0x01, 0x00, 0x5b, 0xb9, 0x82, 0x15]
        let compressed = capture { client in
            for (encoding, message) in [("gzip", gzipped), ("deflate", deflated), ("gzip", [0x1f, 0x8b])] {
                guard let id = call(client, extra: [("grpc-encoding", encoding)], messages: [], endInput: false) else { continue }
                client.sendMessage(streamID: id, message, compressed: true)
                client.endInput(streamID: id)
            }
        }
        let wrongType = capture { client in call(client, contentType: "application/json", messages: [[1]]) }
        let pings = capture { client in for index in 0..<5 { client.ping(UInt64(index)) } }
        var continuation = HTTP2Preface.bytes + rawFrame(4, [])
        continuation += rawFrame(1, flags: 0, stream: 1, literal(":method", "POST") + literal(":path", "/a/b"))
        for index in 0..<12 { continuation += rawFrame(9, stream: 1, literal("x-\(index)", "v")) }
        let settingsFlood = HTTP2Preface.bytes + (0..<120).flatMap { _ in rawFrame(4, []) }
        return [
            Seed(name: "unary", bytes: [1] + unary),
            Seed(name: "metadata-bin", bytes: [2] + metadata),
            Seed(name: "split-message", bytes: [3] + split),
            Seed(name: "several-calls", bytes: [4] + several),
            Seed(name: "reset", bytes: [5] + reset),
            Seed(name: "compressed", bytes: [6] + compressed),
            Seed(name: "wrong-content-type", bytes: [7] + wrongType),
            Seed(name: "pings", bytes: [8] + pings),
            Seed(name: "continuation-flood", bytes: [9] + continuation),
            Seed(name: "settings-flood", bytes: [10] + settingsFlood),
            Seed(name: "http1-request", bytes: [11] + Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
            Seed(name: "stream-reset", bytes: [12] + streamReset),
        ]
    }

    /// Runs the stages on a client joined to a server (pumping after each stage) and returns every byte the client sent.
    private static func capture(chunk: Int = 16_384, _ stages: (GRPCClientSession) -> Void...) -> [UInt8] {
        var options = GRPCClientSession.Options()
        options.maxDataChunk = chunk
        guard let client = try? GRPCClientSession(options: options), let server = try? GRPCServerSession() else { return [] }
        var responder = EchoResponder()
        var sent: [UInt8] = []
        func pump() {
            for _ in 0..<1000 {
                var toServer: [UInt8] = []
                var toClient: [UInt8] = []
                try? client.writeOutput(into: &toServer)
                sent += toServer
                if let events = try? server.receive(toServer) { try? responder.handle(events, server) }
                if let events = try? server.writeOutput(into: &toClient) { try? responder.handle(events, server) }
                try? client.receive(toClient)
                if toServer.isEmpty && toClient.isEmpty { return }
            }
        }
        pump()
        for stage in stages {
            stage(client)
            pump()
        }
        return sent
    }

    @discardableResult
    private static func call(_ client: GRPCClientSession, path: String = "/larder.v1.Test/Echo",
                             extra: [(String, String)] = [], contentType: String = "application/grpc",
                             messages: [[UInt8]], endInput: Bool = true) -> Int32? {
        let headers = GRPCClientSession.requestHeaders(path: path, extra: extra, contentType: contentType)
        guard let id = client.startCall(headers: headers) else { return nil }
        for message in messages { client.sendMessage(streamID: id, message) }
        if endInput { client.endInput(streamID: id) }
        return id
    }

    private static func rawFrame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
                UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
            + payload
    }

    /// An HPACK literal without indexing, new name, short strings (RFC 7541 §6.2.2).
    private static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }
}
