import Foundation
import LarderAPI
import LarderClient
import LarderHTTP2
import LarderTestSupport
import LarderWire
import Testing

/// Replies and the memory budget at the edges of a connection's life: a lean connection that
/// fails while its pipelined calls are being handled, and an HTTP/2 peer that only reads
/// while a reply arrives behind output still waiting for it (audit 17, items 1 and 2).
@Suite("Reply delivery and the budget at a connection's edges", .offThePool)
struct ReplyDeliveryEndToEndTests {
    /// A failed write in the middle of a read's frames closes the connection; before, the
    /// frames after it were still handled, and what their answers added to the memory budget
    /// was never given back (5 MB after 100 such peers): the whole budget leaked away in time.
    @Test("peers that reset with pipelined calls in flight leave nothing held in the memory budget")
    func resetMidReadLeavesNoBudget() async throws {
        // The smallest output cap, so a flush (and its failed write) comes every few answers.
        let server = try await ServerProcess(arguments: ["--max-output-bytes", "1024", "--no-seed"])
        defer { server.stop() }
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(30))
        defer { client.close() }
        var batch: [UInt8] = []
        for id in 1...400 {
            Frame.append(ProtoCodec.encode(RequestEnvelope(
                callID: UInt64(id), method: HealthMethods.check.path,
                payload: ProtoCodec.encode(HealthCheckRequest()))), to: &batch)
        }
        for _ in 0..<60 {
            let peer = try RawConnection(port: server.port)
            peer.resetOnClose()
            peer.send(batch)
        }  // each peer's socket closes, with a reset, as it goes out of scope
        // Once the server has closed them all, nothing may stay held (bounded wait: 60 s).
        var metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
        for _ in 0..<600 where metrics.connectionsOpen > 1 || metrics.memoryHeldBytes != 0 {
            try await Task.sleep(for: .milliseconds(100))
            metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
        }
        #expect(metrics.connectionsOpen == 1, "only the metrics client is left")
        #expect(metrics.memoryHeldBytes == 0, "memory held with no peer left: \(metrics.memoryHeldBytes) bytes")
    }

    /// HPACK: a literal header field without indexing, new name, no Huffman (RFC 7541 §6.2.2).
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    /// HEADERS (END_HEADERS) and DATA (END_STREAM) of one unary gRPC call.
    static func call(_ stream: UInt32, _ path: String, _ message: [UInt8]) -> [UInt8] {
        let block = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "x"),
                     ("content-type", "application/grpc"), ("te", "trailers")].flatMap { literal($0.0, $0.1) }
        let length = UInt32(message.count)
        let prefixed = [0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
                        UInt8(length & 0xFF)] + message
        return HTTP2SlowPeerEndToEndTests.frame(1, flags: 4, stream: stream, block)
            + HTTP2SlowPeerEndToEndTests.frame(0, flags: 1, stream: stream, prefixed)
    }

    /// The streams the frames in `bytes` end (END_STREAM on HEADERS or DATA); returns the bytes
    /// of a last frame not yet whole.
    static func endedStreams(_ bytes: [UInt8], into ended: inout Set<UInt32>) -> [UInt8] {
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 9 + length <= bytes.count else { break }
            if bytes[index + 3] <= 1 && bytes[index + 4] & 1 != 0 {
                ended.insert((0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[index + 5 + $1]) } & 0x7FFF_FFFF)
            }
            index += 9 + length
        }
        return Array(bytes[index...])
    }

    /// A reply the store delivered while the connection's earlier output was still waiting for
    /// the socket went into the HTTP/2 session only; the socket's draining wrote the output but
    /// never took it from the session, so a peer that only reads (windows large enough that it
    /// owes no WINDOW_UPDATE) waited until it sent something else.
    @Test("an HTTP/2 reply delivered behind waiting output reaches a peer that only reads")
    func replyBehindWaitingOutputIsSent() async throws {
        // No write-stall timeout: the peer reads nothing until ListLocations is answered, which on
        // a busy machine took longer than the default 30 s, and the server then closed it.
        let server = try await ServerProcess(arguments: ["--no-seed", "--write-stall-timeout", "0"])
        defer { server.stop() }
        let lean = try LarderClient.loopback(port: server.port, timeout: .seconds(30))
        defer { lean.close() }
        let peer = try RawConnection(port: server.port, receiveBufferBytes: 4096)
        let window: UInt32 = 0x7FFF_FFFF
        let grow = window - 65_535
        let settings = HTTP2SlowPeerEndToEndTests.frame(4, [0, 4, UInt8(window >> 24), UInt8(window >> 16 & 0xFF),
                                                            UInt8(window >> 8 & 0xFF), UInt8(window & 0xFF)])
        let windowUpdate = HTTP2SlowPeerEndToEndTests.frame(8, [UInt8(grow >> 24), UInt8(grow >> 16 & 0xFF),
                                                                UInt8(grow >> 8 & 0xFF), UInt8(grow & 0xFF)])
        // Answered on the loop: ~7 MB of replies, more than the sockets hold, less than the
        // output cap (8 MiB), so reading goes on and the last call reaches a store thread.
        let describe = ProtoCodec.encode(DescribeTypeRequest(name: "larder.v1.MealRecord"))
        let inline = 20_000
        var requests = HTTP2Preface.bytes + settings + windowUpdate + HTTP2SlowPeerEndToEndTests.frame(4, flags: 1)
        for index in 0..<inline {
            requests += Self.call(UInt32(2 * index + 1), ServerReflectionMethods.describeType.path, describe)
        }
        let listStream = UInt32(2 * inline + 1)
        requests += Self.call(listStream, LocationMethods.listLocations.path, ProtoCodec.encode(ListLocationsRequest()))
        let bytes = requests
        await offThePool { peer.send(bytes) }
        // The store has answered ListLocations (its reply is with the loop) before the peer reads a byte.
        var answered = false
        for _ in 0..<1200 where !answered {
            let metrics = try await lean.call(AdminMethods.getMetrics, GetMetricsRequest())
            answered = (metrics.methods.first { $0.method == LocationMethods.listLocations.path }?.totalCalls ?? 0) >= 1
            if !answered { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(answered, "ListLocations answered within 120 s")
        // Now read everything, sending nothing.
        let ended = await offThePool { Self.readEndedStreams(from: peer, until: listStream) }
        let listAnswered = ended.contains(listStream)
        #expect(listAnswered, "the ListLocations reply came without the peer sending anything")
        #expect(ended.count == inline + 1, "every call answered: \(ended.count)")
    }

    /// Reads HTTP/2 frames from `peer`, sending nothing, until `stream` has ended, the server
    /// closes, 60 s pass without a byte (a slow server under ThreadSanitizer on a busy machine
    /// still sends; a stuck one sends nothing more), or 15 minutes in all; returns the streams
    /// that ended.
    static func readEndedStreams(from peer: RawConnection, until stream: UInt32) -> Set<UInt32> {
        var ended = Set<UInt32>()
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let end = ContinuousClock.now.advanced(by: .seconds(900))
        var quietUntil = ContinuousClock.now.advanced(by: .seconds(60))
        while !ended.contains(stream) && ContinuousClock.now < quietUntil && ContinuousClock.now < end {
            let count = buffer.withUnsafeMutableBytes { peer.receiveSome(into: $0) }
            if count == 0 { break }
            if count < 0 { continue }  // the receive timeout: read again until a deadline
            quietUntil = ContinuousClock.now.advanced(by: .seconds(60))
            pending = endedStreams(pending + buffer[0..<count], into: &ended)
        }
        return ended
    }

    /// Metrics until the server holds nothing for peers but the metrics client (bounded: 60 s).
    static func settled(_ client: LarderClient) async throws -> Metrics {
        var metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
        for _ in 0..<600 where metrics.connectionsOpen > 1 || metrics.memoryHeldBytes != 0 || metrics.callsParked != 0 {
            try await Task.sleep(for: .milliseconds(100))
            metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
        }
        return metrics
    }

    /// A lean peer that sends a read, then part of a frame, then ends its input: the part can never
    /// be completed, and the read waited for the connection to hold less (its bytes counted). Before,
    /// the connection stayed open for good with all it held (audit 19 F1); now the part is dropped,
    /// the read runs and is answered, and the connection closes.
    @Test("a lean peer that ends its input inside a frame gets its earlier read answered, and nothing stays held")
    func leanEndOfInputInsideAFrame() async throws {
        let server = try await ServerProcess(arguments: ["--max-output-bytes", "1024"])
        defer { server.stop() }
        let metricsClient = try LarderClient.loopback(port: server.port, timeout: .seconds(30))
        defer { metricsClient.close() }
        let peer = try RawConnection(port: server.port)
        var bytes: [UInt8] = []
        Frame.append(ProtoCodec.encode(RequestEnvelope(callID: 1, method: LocationMethods.listLocations.path,
                                                        payload: ProtoCodec.encode(ListLocationsRequest()))), to: &bytes)
        bytes += [0, 3, 0, 0] + [UInt8](repeating: 7, count: 100_000)  // a frame of 196,608 bytes, half sent
        peer.send(bytes)
        peer.shutdownSending()
        let reply = await offThePool { peer.receive() }
        #expect(reply?.callID == 1 && reply?.statusCode == .ok, "\(String(describing: reply))")
        #expect(await offThePool { peer.isClosedByServer() })
        let metrics = try await Self.settled(metricsClient)
        #expect(metrics.connectionsOpen == 1 && metrics.memoryHeldBytes == 0 && metrics.callsParked == 0,
                "connections \(metrics.connectionsOpen), held \(metrics.memoryHeldBytes), parked \(metrics.callsParked)")
    }

    /// The same over HTTP/2: a request stream never half-closed, a read after it, then the end of
    /// input. The unfinished stream is reset, the read answered, and nothing stays held.
    @Test("an HTTP/2 peer that ends its input with a request unfinished gets its read answered, and nothing stays held")
    func http2EndOfInputWithAnUnfinishedRequest() async throws {
        let server = try await ServerProcess(arguments: ["--max-output-bytes", "1024"])
        defer { server.stop() }
        let metricsClient = try LarderClient.loopback(port: server.port, timeout: .seconds(30))
        defer { metricsClient.close() }
        let peer = try RawConnection(port: server.port)
        let frame = HTTP2SlowPeerEndToEndTests.frame
        let block = [(":method", "POST"), (":scheme", "http"), (":path", LocationMethods.createLocation.path),
                     (":authority", "x"), ("content-type", "application/grpc")].flatMap { Self.literal($0.0, $0.1) }
        // Stream 1: a 40 KB message begun (its 5-byte prefix says 100,000 bytes), never finished.
        let unfinished = frame(1, 4, 1, nil, block) + frame(0, 0, 1, nil, [0, 0, 1, 0x86, 0xA0] + [UInt8](repeating: 1, count: 16_000))
            + frame(0, 0, 1, nil, [UInt8](repeating: 1, count: 16_000)) + frame(0, 0, 1, nil, [UInt8](repeating: 1, count: 8_000))
        let read = Self.call(3, LocationMethods.listLocations.path, ProtoCodec.encode(ListLocationsRequest()))
        peer.send(HTTP2Preface.bytes + frame(4, 0, 0, nil, []) + unfinished + read)
        peer.shutdownSending()
        let ended = await offThePool { Self.readEndedStreams(from: peer, until: 3) }
        let answered = ended.contains(3)
        #expect(answered, "the read after the unfinished request was answered")
        let metrics = try await Self.settled(metricsClient)
        #expect(metrics.connectionsOpen == 1 && metrics.memoryHeldBytes == 0 && metrics.callsParked == 0,
                "connections \(metrics.connectionsOpen), held \(metrics.memoryHeldBytes), parked \(metrics.callsParked)")
    }
}
