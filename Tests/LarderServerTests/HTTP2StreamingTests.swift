import Foundation
import LarderAPI
import LarderClient
import LarderHTTP2
@testable import LarderServer
import LarderTestSupport
import LarderWire
import Testing

/// Streaming calls over gRPC over HTTP/2 against the real server: health Watch (server
/// streaming), the standard reflection (bidirectional), their deadlines, cancellation, the
/// drain, a client that never reads, and the lean protocol's refusal.
@Suite("HTTP/2 streaming (in process)", .offThePool)
struct HTTP2StreamingTests {
    static let watch = HealthMethods.watch.path
    static let reflection = GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path

    static func statuses(_ response: GRPCClientSession.Response?) -> [HealthCheckResponse.ServingStatus] {
        (response?.messages ?? []).compactMap { try? ProtoCodec.decode(HealthCheckResponse.self, from: $0).status }
    }

    static func listServices() -> [UInt8] {
        ProtoCodec.encode(GrpcReflectionV1ServerReflectionRequest(messageRequest: .listServices("")))
    }

    /// Calls in flight on the server (over the lean protocol; the metrics call counts itself).
    static func callsInFlight(_ client: LarderClient) async throws -> Int64 {
        try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight - 1
    }

    /// What the server counted for `path`, by status name.
    static func codes(_ client: LarderClient, _ path: String) async throws -> [String: UInt64] {
        try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).methods.first { $0.method == path }?
            .callsByCode ?? [:]
    }

    @Test func watchSendsTheStatusAndAResetFreesItsSlot() async throws {
        try await withInProcessServer { server in
            let lean = try server.client()
            defer { lean.close() }
            let h2 = try HTTP2TestClient(port: server.port)
            let id = try h2.start(Self.watch, messages: [ProtoCodec.encode(HealthCheckRequest())])
            let first = await offThePool { h2.read(id) { !$0.messages.isEmpty } }
            #expect(Self.statuses(first) == [.serving])
            #expect(first?.ended == false)
            #expect(try await Self.callsInFlight(lean) == 1)
            h2.reset(id)
            #expect(await eventually { (try? await Self.callsInFlight(lean)) == 0 })
            #expect(try await Self.codes(lean, Self.watch)["CANCELLED"] == 1)
        }
    }

    @Test func aResetStreamsSlotIsFreeForTheNextCallAtOnce() async throws {
        // One call per connection: SETTINGS_MAX_CONCURRENT_STREAMS 1, and the core's limit 1.
        try await withInProcessServer({ $0.maxCallsPerConnection = 1 }) { server in
            let h2 = try HTTP2TestClient(port: server.port)
            let request = [ProtoCodec.encode(HealthCheckRequest())]
            var id = try h2.start(Self.watch, messages: request)
            for round in 0..<5 {
                let current = id
                let response = await offThePool { h2.read(current) { !$0.messages.isEmpty || $0.ended } }
                #expect(Self.statuses(response) == [.serving], "round \(round): \(String(describing: response?.trailers))")
                // The client counts the stream closed once it sent RST_STREAM: the next call follows at once.
                h2.reset(id)
                id = try h2.start(Self.watch, messages: request)
            }
        }
    }

    @Test func aStreamPastItsDeadlineEndsWithDeadlineExceeded() async throws {
        try await withInProcessServer { server in
            let lean = try server.client()
            defer { lean.close() }
            let h2 = try HTTP2TestClient(port: server.port)
            let id = try h2.start(Self.watch, extra: [("grpc-timeout", "300m")],
                                  messages: [ProtoCodec.encode(HealthCheckRequest())])
            let response = await offThePool { h2.read(id) { $0.ended } }
            #expect(Self.statuses(response) == [.serving])
            #expect(response?.trailers["grpc-status"] == "4", "\(String(describing: response?.trailers))")
            #expect(response?.trailers["grpc-message"]?.contains("deadline") == true)
            #expect(await eventually { (try? await Self.callsInFlight(lean)) == 0 })
        }
    }

    @Test func reflectionAnswersEachMessageAndEndsOnHalfClose() async throws {
        try await withInProcessServer { server in
            let h2 = try HTTP2TestClient(port: server.port)
            let id = try h2.start(Self.reflection, messages: [Self.listServices()], endInput: false)
            let first = await offThePool { h2.read(id) { $0.messages.count == 1 } }
            let services = try ProtoCodec.decode(GrpcReflectionV1ServerReflectionResponse.self,
                                                 from: try #require(first?.messages.first))
            guard case .listServicesResponse(let list)? = services.messageResponse else {
                Issue.record("not a list: \(services)")
                return
            }
            #expect(Set(list.service.map(\.name)).isSuperset(of: [
                "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "larder.v1.LocationService"]))
            #expect(first?.ended == false, "the stream stays open until the client half-closes")
            h2.send(ProtoCodec.encode(GrpcReflectionV1ServerReflectionRequest(
                messageRequest: .fileContainingSymbol("larder.v1.Location"))), on: id)
            _ = await offThePool { h2.read(id) { $0.messages.count == 2 } }
            h2.endInput(id)
            let done = await offThePool { h2.read(id) { $0.ended } }
            #expect(done?.messages.count == 2)
            #expect(done?.trailers["grpc-status"] == "0")
        }
    }

    /// Audit 34 L2: deadlines expiring by the thousand a second are not abuse. A client that
    /// resets started calls faster than their bucket refills is read no faster than it does;
    /// before, it got GOAWAY `ENHANCE_YOUR_CALM` and lost every call on the connection.
    @Test func resetsOfStartedCallsPastTheBucketHoldReadingAndKeepTheConnection() async throws {
        let logPath = NSTemporaryDirectory() + "larder-reads-held-\(UUID().uuidString).log"
        let logFD = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(logFD >= 0)
        defer { close(logFD); unlink(logPath) }
        try await withInProcessServer(logger: Logger(minimumLevel: .info, fd: logFD), {
            $0.maxCallsPerConnection = 10
            $0.adjustHTTP2 = { $0.startedResetBurst = 200; $0.startedResetsPerSecond = 50 }
        }) { server in
            let h2 = try HTTP2TestClient(port: server.port)
            // In one write, 100 resets past the bucket: two seconds of its refill. (Were the server
            // to take those two seconds to read them, nothing would be held: a busy box cannot.)
            try h2.startAndReset(Self.reflection, count: 300)
            // Reading resumes once the bucket has refilled: a call after them is answered.
            let id = try h2.start(HealthMethods.check.path, messages: [ProtoCodec.encode(HealthCheckRequest())])
            let answer = await offThePool { h2.read(id) { $0.ended } }
            #expect(answer?.trailers["grpc-status"] == "0", "\(String(describing: answer))")
            #expect(h2.goawaysOnTheWire.isEmpty, "\(h2.goawaysOnTheWire)")
        }
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.contains("event=http2_reads_held"), "\(log)")
    }

    @Test func aClientThatNeverReadsAStreamIsResetAndItsBytesFreed() async throws {
        try await withInProcessServer({ $0.maxBufferedOutputBytes = 64 * 1024 }) { server in
            let lean = try server.client()
            defer { lean.close() }
            // A window of 0: the server may send headers but no response data at all.
            var options = GRPCClientSession.Options()
            options.initialWindowSize = 0
            let h2 = try HTTP2TestClient(port: server.port, options: options)
            let request = ProtoCodec.encode(GrpcReflectionV1ServerReflectionRequest(
                messageRequest: .fileByFilename("larder/v1/meal_record.proto")))
            let id = try h2.start(Self.reflection, messages: Array(repeating: request, count: 400), endInput: false)
            let response = await offThePool { h2.read(id) { $0.closeCode != nil } }
            #expect(response?.closeCode == .enhanceYourCalm)
            #expect(response?.dataBytes == 0)
            #expect(await eventually { (try? await Self.callsInFlight(lean)) == 0 })
            #expect(try await Self.codes(lean, Self.reflection)["RESOURCE_EXHAUSTED"] == 1)
            // What the stream held went back to the budget once its stream closed.
            #expect(await eventually { server.server.budget.usedBytes < 64 * 1024 })
        }
    }

    @Test func aDrainEndsWatchesWithNotServingAndOtherStreamsAtTheTimeout() async throws {
        let server = try InProcessServer { $0.drainTimeoutSeconds = 2 }
        let h2 = try HTTP2TestClient(port: server.port)
        let watch = try h2.start(Self.watch, messages: [ProtoCodec.encode(HealthCheckRequest())])
        let open = try h2.start(Self.reflection, messages: [Self.listServices()], endInput: false)
        _ = await offThePool { h2.read(watch) { !$0.messages.isEmpty } }
        _ = await offThePool { h2.read(open) { !$0.messages.isEmpty } }
        server.server.shutdown()
        let watched = await offThePool { h2.read(watch) { $0.ended } }
        #expect(Self.statuses(watched) == [.serving, .notServing])
        #expect(watched?.trailers["grpc-status"] == "0")
        // Before the GOAWAY: grpclib (python-h2) reads nothing of a connection after its first one.
        #expect(watched?.goawaysBeforeEnd == 0)
        let ended = await offThePool { h2.read(open) { $0.ended } }
        #expect(ended?.trailers["grpc-status"] == "14", "\(String(describing: ended?.trailers))")
        #expect(ended?.trailers["grpc-message"]?.contains("drain timeout") == true)
        #expect(await server.stop())
    }

    @Test func withAuthOnWatchNeedsNoTokenAndReflectionDoes() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-server-tests")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("stream-token", in: directory)
        try await withInProcessServer({ $0.authTokenFile = tokenFile }) { server in
            let h2 = try HTTP2TestClient(port: server.port)
            let watch = try h2.start(Self.watch, messages: [ProtoCodec.encode(HealthCheckRequest())])
            let first = await offThePool { h2.read(watch) { !$0.messages.isEmpty } }
            #expect(Self.statuses(first) == [.serving])
            let anonymous = try h2.start(Self.reflection, messages: [Self.listServices()], endInput: false)
            let refused = await offThePool { h2.read(anonymous) { $0.ended } }
            #expect(refused?.trailers["grpc-status"] == "16", "\(String(describing: refused?.trailers))")
            #expect(refused?.messages.isEmpty == true)
            let allowed = try h2.start(Self.reflection, extra: [("authorization", "Bearer stream-token")],
                                       messages: [Self.listServices()])
            let answered = await offThePool { h2.read(allowed) { $0.ended } }
            #expect(answered?.trailers["grpc-status"] == "0")
            #expect(answered?.messages.count == 1)
        }
    }

    /// Without the token, a served method answers as an unknown one does (UNAUTHENTICATED),
    /// whatever the request's shape: its checks of the message count (INTERNAL "takes one
    /// request message") told a peer without the token which names are served (audit 20 F5).
    @Test func withoutTheTokenAServedMethodAnswersAsAnUnknownOne() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-server-tests")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("oracle-token", in: directory)
        try await withInProcessServer({ $0.authTokenFile = tokenFile }) { server in
            let h2 = try HTTP2TestClient(port: server.port)
            let request = ProtoCodec.encode(ListLocationsRequest())
            for path in ["/larder.v1.LocationService/ListLocations", "/larder.v1.LocationService/NoSuch"] {
                for messages in [[], [request, request]] {
                    let stream = try h2.start(path, messages: messages)
                    let ended = await offThePool { h2.read(stream) { $0.ended } }
                    let trailers = String(describing: ended?.trailers)
                    #expect(ended?.trailers["grpc-status"] == "16", "\(path), \(messages.count) messages: \(trailers)")
                    #expect(ended?.trailers["grpc-message"]?.contains("requires a bearer token") == true)
                }
            }
            let allowed = try h2.start("/larder.v1.LocationService/ListLocations",
                                       extra: [("authorization", "Bearer oracle-token")], messages: [request, request])
            let checked = await offThePool { h2.read(allowed) { $0.ended } }
            #expect(checked?.trailers["grpc-status"] == "13", "with the token, the shape is checked as before")
            // A repeated header: the early check reads the value the core does (the last), so a
            // call it lets through is held for its message like any other (review 22).
            let repeated = try h2.start("/larder.v1.LocationService/ListLocations",
                                        extra: [("authorization", "Bearer wrong"), ("authorization", "Bearer oracle-token")],
                                        messages: [request, request])
            let held = await offThePool { h2.read(repeated) { $0.ended } }
            #expect(held?.trailers["grpc-status"] == "13", "\(String(describing: held?.trailers))")
        }
    }

    @Test func streamingMethodsOverTheLeanProtocolAreUnimplemented() async throws {
        try await withInProcessServer { server in
            let raw = try server.raw()
            for (callID, path) in [(UInt64(1), Self.watch), (2, Self.reflection)] {
                raw.send(RequestEnvelope(callID: callID, method: path, payload: []))
                let reply = await offThePool { raw.receive() }
                #expect(reply?.callID == callID)
                #expect(reply?.statusCode == .unimplemented)
                #expect(reply?.statusMessage.contains("gRPC over HTTP/2") == true)
            }
        }
    }
}
