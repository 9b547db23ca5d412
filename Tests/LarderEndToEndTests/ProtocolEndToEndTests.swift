import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

@Suite("Wire protocol over TCP", .offThePool)
struct ProtocolEndToEndTests {
    static func request(_ callID: UInt64, _ method: String, _ payload: [UInt8]) -> RequestEnvelope {
        RequestEnvelope(callID: callID, method: method, payload: payload)
    }

    @Test(arguments: Backend.all)
    func manyCallsInFlightOnOneConnection(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                            location: Location(name: "Room \(index)", colorHex: "#123456"))).name
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 200)
            #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 204)
        }
    }

    @Test func fastCallIsAnsweredBeforeSlowerOnesQueuedAhead() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        // Pipeline: 20 creates (writer, fsync each batch), then one health check (answered on the loop).
        var bytes: [UInt8] = []
        for index in 1...20 {
            Frame.append(ProtoCodec.encode(Self.request(UInt64(index), LocationMethods.createLocation.path, ProtoCodec.encode(
                CreateLocationRequest(location: Location(name: "R\(index)", colorHex: "#010101"))))), to: &bytes)
        }
        Frame.append(ProtoCodec.encode(Self.request(99, HealthMethods.check.path, ProtoCodec.encode(HealthCheckRequest()))), to: &bytes)
        raw.send(bytes)
        var order: [UInt64] = []
        for _ in 0..<21 {
            guard let reply = raw.receive() else { break }
            #expect(reply.statusCode == .ok)
            order.append(reply.callID)
        }
        #expect(Set(order) == Set(Array(1...20) + [99]))
        let healthPosition = try #require(order.firstIndex(of: 99))
        #expect(healthPosition < 20, "the health check was not held up behind the writes: \(order)")
    }

    @Test func unknownMethodAndUndecodablePayload() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        raw.send(Self.request(1, "/larder.v1.LocationService/Teleport", []))
        let unknown = try #require(raw.receive())
        #expect(unknown.callID == 1 && unknown.statusCode == .unimplemented)
        #expect(unknown.statusMessage.contains("Teleport"))
        raw.send(Self.request(2, LocationMethods.getLocation.path, [0xFF, 0xFF, 0xFF]))
        let garbage = try #require(raw.receive())
        #expect(garbage.callID == 2 && garbage.statusCode == .invalidArgument)
        // The connection still works.
        raw.send(Self.request(3, HealthMethods.check.path, []))
        let health = try #require(raw.receive())
        #expect(health.callID == 3 && health.statusCode == .ok)
        #expect(try ProtoCodec.decode(HealthCheckResponse.self, from: health.payload).status == .serving)
    }

    @Test func invalidUTF8InAStringFieldIsInvalidArgument() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        // GetLocationRequest{id = "\xFF\xFE"}: field 1, wire type 2, length 2.
        raw.send(Self.request(7, LocationMethods.getLocation.path, [0x0A, 0x02, 0xFF, 0xFE]))
        let reply = try #require(raw.receive())
        #expect(reply.callID == 7 && reply.statusCode == .invalidArgument)
    }

    @Test(arguments: [
        ("giant length", [0x7F, 0xFF, 0xFF, 0xFF] as [UInt8]),
        ("TLS hello", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]),
    ])
    func foreignOrOversizedInputGetsAConnectionErrorAndOthersKeepWorking(name: String, bytes: [UInt8]) async throws {
        try await withServer { server, client in
            let raw = try RawConnection(port: server.port)
            raw.send(bytes)
            let reply = try #require(raw.receive(), "\(name): a connection-level error frame")
            #expect(reply.callID == 0 && reply.statusCode == .resourceExhausted, "\(name)")
            #expect(raw.isClosedByServer(), "\(name): closed after the error")
            #expect(await server.waitForLog("event=frame_rejected"))
            // Other clients are not disturbed.
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        }
    }

    /// curl pointed at the RPC port instead of `--metrics-listen` (audit 35): an answer it can
    /// show, not a lean frame it reads as HTTP/0.9.
    @Test(arguments: ["GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "POST / HTTP/1.0\r\n\r\n"])
    func anHTTP1RequestGetsAPlainTextBadRequest(request: String) async throws {
        try await withServer { server, client in
            let raw = try RawConnection(port: server.port)
            raw.send(Array(request.utf8))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { raw.receiveSome(into: $0, within: 60) }
                guard count > 0 else { break }
                received += buffer[0..<count]
            }
            let text = String(decoding: received, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
            #expect(text.contains("Connection: close\r\n"), "\(text)")
            let body = text.components(separatedBy: "\r\n\r\n").last ?? ""
            #expect(text.contains("Content-Length: \(body.utf8.count)\r\n"), "\(text)")
            #expect(body.contains("not HTTP/1") && body.contains("--metrics-listen"), "\(body)")
            #expect(await server.waitForLog("not a Larder peer (HTTP request)"))
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        }
    }

    @Test func malformedEnvelopeAndZeroCallIDCloseTheConnection() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let garbage = try RawConnection(port: server.port)
        garbage.send(Frame.encode([0xFF, 0xFF, 0xFF, 0xFF, 0xFF]))
        let reply = try #require(garbage.receive())
        #expect(reply.callID == 0 && reply.statusCode == .invalidArgument)
        #expect(garbage.isClosedByServer())

        let zero = try RawConnection(port: server.port)
        zero.send(Self.request(0, HealthMethods.check.path, []))
        let zeroReply = try #require(zero.receive())
        #expect(zeroReply.callID == 0 && zeroReply.statusCode == .invalidArgument)
        // Each is logged, naming the peer and the reason (PROTOCOL.md §6).
        #expect(await server.waitForLog("reason=\"call_id must be non-zero\""))
        let rejected = server.stderr.split(separator: "\n").filter { $0.contains("event=envelope_rejected") }
        #expect(rejected.count == 2, "\(rejected)")
        #expect(rejected.allSatisfy { $0.contains("peer=127.0.0.1:") })
    }

    @Test func truncatedFrameThenCloseLeavesServerHealthy() async throws {
        try await withServer { server, client in
            do {
                let raw = try RawConnection(port: server.port)
                raw.send([0x00, 0x00, 0x01, 0x00, 0x08, 0x01])  // announces 256 bytes, sends 2
            }
            // Its connection is released at the close (not kept until the frame timeout), and others are served.
            #expect(await server.waitForLog("reason=\"peer closed\""))
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        }
    }

    @Test(arguments: Backend.all)
    func deadlineAlreadyPassedIsNotExecuted(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            // 1 ms cannot cover a fsync'd create queued behind 50 others; the ones that expire must not be stored.
            let outcomes = await withTaskGroup(of: (String, StatusCode).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        do {
                            _ = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                                location: Location(name: "D\(index)", colorHex: "#123456")), timeout: .milliseconds(1))
                            return ("D\(index)", .ok)
                        } catch let error as RPCError {
                            return ("D\(index)", error.code)
                        } catch {
                            return ("D\(index)", .unknown)
                        }
                    }
                }
                return await group.reduce(into: [(String, StatusCode)]()) { $0.append($1) }
            }
            // ABORTED: on PostgreSQL, a call whose transaction another call's deadline cut off.
            let unexpected = outcomes.filter { ![.ok, .deadlineExceeded, .aborted].contains($0.1) }
            #expect(unexpected.isEmpty, "\(unexpected.map { "\($0.0): \($0.1.name)" })")
            // Else this tested no deadline: 50 committed creates in 1 ms each is beyond any machine here.
            #expect(outcomes.contains { $0.1 == .deadlineExceeded }, "every call beat its 1 ms deadline")
            let stored = Set(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.map(\.name))
            for (name, code) in outcomes where code == .ok {
                #expect(stored.contains(name), "\(name) was acknowledged, so it must be stored")
            }
            for (name, code) in outcomes where code == .aborted {
                #expect(!stored.contains(name), "\(name) was answered ABORTED, so it must not be stored")
            }
        }
    }
}
