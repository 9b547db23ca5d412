import Foundation
import LarderAPI
import LarderClient
import LarderHTTP2
import LarderTestSupport
import LarderWire
import Testing

/// gRPC over HTTP/2 against the real server, with our own HTTP/2 client (the interop suite
/// under clients/interop uses grpcio and grpclib): what stock clients cannot be made to do.
@Suite("gRPC over HTTP/2 against larder-server", .offThePool)
struct HTTP2EndToEndTests {
    static let getLocation = LocationMethods.getLocation.path
    static let createLocation = LocationMethods.createLocation.path

    @Test("the preface is recognised however the first bytes are split across reads")
    func prefaceSplitAcrossReads() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        let created = try await lean.call(LocationMethods.createLocation,
                                          CreateLocationRequest(location: Location(name: "Split", colorHex: "#0A0B0C")))
        let request = ProtoCodec.encode(GetLocationRequest(id: created.id))
        // Pieces of 1, 2, 3, … bytes, each sent on its own (TCP_NODELAY, a pause between):
        // the 24-byte preface arrives in 1 to 7 reads, cut at a different place each time.
        for firstPiece in [1, 3, 7, 23, 24, 25] {
            let response = try await offThePool { () throws -> GRPCClientSession.Response? in
                try Self.callSplittingTheOutput(port: server.port, firstPiece: firstPiece, request: request)
            }
            let reply = try #require(response, "first piece \(firstPiece)")
            #expect(reply.trailers["grpc-status"] == "0", "first piece \(firstPiece): \(reply.trailers)")
            let message = try #require(reply.messages.first)
            #expect(try ProtoCodec.decode(Location.self, from: message) == created)
        }
        // Lean clients on the same port are unaffected.
        #expect(try await lean.call(LocationMethods.getLocation, GetLocationRequest(id: created.id)) == created)
    }

    @Test("the smallest --max-output-bytes still serves calls over HTTP/2: a call's own stream does not count against it")
    func aCallsOwnStreamDoesNotCountAgainstItsAdmission() async throws {
        let server = try await ServerProcess(arguments: ["--max-output-bytes", "1024"])
        defer { server.stop() }
        let client = try HTTP2TestClient(port: server.port)
        let check = try client.start(HealthMethods.check.path, extra: [("x-pad", String(repeating: "p", count: 2000))],
                                     messages: [ProtoCodec.encode(HealthCheckRequest())])
        let answered = await offThePool { client.read(check) { !$0.trailers.isEmpty } }
        #expect(answered?.trailers["grpc-status"] == "0", "\(String(describing: answered))")
        #expect(answered?.messages.count == 1)
    }

    @Test("a client that ends its connection (TCP end of stream) with a health watch and a reflection stream open: both end CANCELLED and the connection closes")
    func streamsEndWhenTheClientEndsItsConnection() async throws {
        // An hour of idle timeout: only the end of the streams can close the connection here.
        let server = try await ServerProcess(arguments: ["--idle-timeout", "3600"])
        defer { server.stop() }
        let client = try HTTP2TestClient(port: server.port)
        let watch = try client.start(HealthMethods.watch.path, messages: [ProtoCodec.encode(HealthCheckRequest())])
        let reflection = try client.start(GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path, endInput: false)
        let first = await offThePool { client.read(watch) { !$0.messages.isEmpty } }
        #expect(first?.messages.count == 1, "the watch's first status")
        client.shutdownSending()
        for stream in [watch, reflection] {
            let ended = await offThePool { client.read(stream) { !$0.trailers.isEmpty } }
            #expect(ended?.trailers["grpc-status"] == "\(StatusCode.cancelled.rawValue)", "\(String(describing: ended))")
            #expect(ended?.trailers["grpc-message"]?.contains("end of stream") == true)
        }
        // Before, the server kept the socket (CLOSE_WAIT) and its connection slot for good.
        #expect(await offThePool { client.readUntilClosed(seconds: 60) })
        #expect(await server.waitForLog("reason=\"peer closed\""))
    }

    @Test("grpc-timeout is the server's deadline: a write waiting for a locked database is answered DEADLINE_EXCEEDED at it, and never executed")
    func serverEnforcesTheDeadline() async throws {
        // A long busy timeout: the write waits for the lock until the test releases it.
        let server = try await ServerProcess(arguments: ["--busy-timeout", "300"])
        defer { server.stop() }
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        let lock = try SQLiteLock(path: server.databasePath)
        let request = ProtoCodec.encode(CreateLocationRequest(location: Location(name: "Too late", colorHex: "#010203")))
        // Our client never cancels, so whatever status comes back is the server's own; and it
        // comes while the database is still locked (the lock is released only after it).
        let reply = try #require(try await offThePool { () throws -> GRPCClientSession.Response? in
            try Self.unary(port: server.port, Self.createLocation, request, extra: [("grpc-timeout", "500m")])
        })
        #expect(reply.trailers["grpc-status"] ?? reply.headers["grpc-status"] == String(StatusCode.deadlineExceeded.rawValue),
                "\(reply.headers) \(reply.trailers)")
        let message = GRPCPercentEncoding.decode((reply.trailers["grpc-message"] ?? reply.headers["grpc-message"] ?? "").utf8)
        #expect(message == "deadline of \(Self.createLocation) exceeded", "\(message)")
        #expect(reply.messages.isEmpty)
        lock.release()
        // The writer reaches the write once the lock is gone, and skips it: its deadline passed.
        #expect(await eventually {
            (try? await lean.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight) == 1
        })
        // The server goes on serving, over HTTP/2 and the lean protocol.
        let after = try await offThePool { () throws -> GRPCClientSession.Response? in
            try Self.unary(port: server.port, Self.createLocation, ProtoCodec.encode(
                CreateLocationRequest(location: Location(name: "In time", colorHex: "#010203"))), extra: [("grpc-timeout", "60S")])
        }
        #expect(after?.trailers["grpc-status"] == "0", "\(String(describing: after))")
        let names = try await lean.call(LocationMethods.listLocations, ListLocationsRequest()).locations.map(\.name)
        #expect(names.contains("In time"))
        #expect(!names.contains("Too late"))
    }

    @Test("a client that ends its input with responses waiting for its flow-control window is closed at once")
    func aClosedWindowAfterEndOfInputClosesTheConnection() async throws {
        // An hour of write-stall timeout: only the end of input can close the connection here. A
        // small output cap: the calls after the first few replies wait for room (parked, in flight).
        let server = try await ServerProcess(arguments: ["--write-stall-timeout", "3600", "--idle-timeout", "3600",
                                                         "--max-output-bytes", "1024", "--log-level", "debug"])
        defer { server.stop() }
        var options = GRPCClientSession.Options()
        options.initialWindowSize = 0  // no response DATA may come
        let client = try HTTP2TestClient(port: server.port, options: options)
        let list = LocationMethods.listLocations.path
        let calls = try (0..<20).map { _ in try client.start(list, messages: [ProtoCodec.encode(ListLocationsRequest())]) }
        #expect(await server.waitForLog("event=call_parked"))
        #expect(calls.allSatisfy { client.response($0)?.messages.isEmpty ?? true })
        client.shutdownSending()
        // Before, the connection, its calls and their responses stayed for the write stall (audit 32 F4).
        #expect(await offThePool { client.readUntilClosed(seconds: 60) })
        #expect(await server.waitForLog("which it can no longer open"))
    }

    @Test("a deadline already passed (grpc-timeout 0n) is DEADLINE_EXCEEDED for calls answered on the loop too")
    func anExpiredDeadlineEndsLoopAnsweredCalls() async throws {
        let server = try await ServerProcess(arguments: ["--access-log"])
        defer { server.stop() }
        for path in [HealthMethods.check.path, AdminMethods.getServerInfo.path, Self.getLocation] {
            let request: [UInt8] = path == Self.getLocation
                ? ProtoCodec.encode(GetLocationRequest(id: "00000000-0000-4000-8000-000000000000")) : []
            let expired = try await offThePool { () throws -> GRPCClientSession.Response? in
                try Self.unary(port: server.port, path, request, extra: [("grpc-timeout", "0n")])
            }
            let fields = (expired?.trailers.isEmpty ?? true) ? expired?.headers : expired?.trailers
            #expect(fields?["grpc-status"] == String(StatusCode.deadlineExceeded.rawValue), "\(path): \(String(describing: expired))")
            #expect(fields.flatMap { $0["grpc-message"] }.map { GRPCPercentEncoding.decode($0.utf8) }
                    == "deadline of \(path) exceeded", "\(path)")
            // Counted and access-logged as such, under the method's own name.
            #expect(await server.waitForLog("method=\(path) status=DEADLINE_EXCEEDED"), "\(path)")
            // With time left, the same call is answered.
            let inTime = try await offThePool { () throws -> GRPCClientSession.Response? in
                try Self.unary(port: server.port, path, request, extra: [("grpc-timeout", "60S")])
            }
            let status = (inTime?.trailers.isEmpty ?? true) ? inTime?.headers["grpc-status"] : inTime?.trailers["grpc-status"]
            #expect(status == String(path == Self.getLocation ? StatusCode.notFound.rawValue : 0), "\(path)")
        }
    }

    @Test("requests held open count in the memory budget, and a connection that does not complete them is ended")
    func incompleteRequestsAreBounded() async throws {
        // A 1 MiB budget (the least) and a 10 s frame timeout: long enough that a server on a busy
        // machine has seen the budget used up on a tick before the timeout gives it back.
        let server = try await ServerProcess(arguments: ["--memory-budget-bytes", "1048576", "--frame-timeout", "10", "--no-seed"])
        defer { server.stop() }
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        let request = ProtoCodec.encode(GetLocationRequest(id: "00000000-0000-4000-8000-000000000000"))
        // Six whole request messages of 256 KiB each that never half-close: 1.5 MiB held.
        let big = request + Array(repeating: 0, count: 256 * 1024)
        let hog = try HTTP2TestClient(port: server.port)
        for _ in 0..<6 { _ = try hog.start(Self.getLocation, messages: [big], endInput: false) }
        let closed = try await offThePool { () throws -> Bool in hog.readUntilClosed(seconds: 60) }
        #expect(closed, "the connection holding incomplete requests was not ended")
        #expect(await server.waitForLog("event=memory_budget_exhausted"), "the held requests were not counted")
        #expect(await server.waitForLog("event=frame_timeout"))
        #expect(hog.goaways.last?.code == .enhanceYourCalm, "\(hog.goaways)")
        // The server goes on serving, over both protocols, with its budget given back.
        let after = try await offThePool { () throws -> GRPCClientSession.Response? in
            try Self.unary(port: server.port, Self.getLocation, request)
        }
        #expect(after?.trailers["grpc-status"] ?? after?.headers["grpc-status"] == String(StatusCode.notFound.rawValue))
        #expect(try await lean.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
    }

    @Test("streams held open past the memory budget are ended RESOURCE_EXHAUSTED; a connection within its share keeps its own")
    func streamsOverTheBudgetAreShed() async throws {
        let server = try await ServerProcess(arguments: ["--memory-budget-bytes", "1048576", "--idle-timeout", "3600"])
        defer { server.stop() }
        let watchRequest = ProtoCodec.encode(HealthCheckRequest())
        // One health watch with little metadata: far within its share.
        let bystander = try HTTP2TestClient(port: server.port)
        let kept = try bystander.start(HealthMethods.watch.path, messages: [watchRequest])
        #expect(await offThePool { bystander.read(kept) { !$0.messages.isEmpty } }?.messages.count == 1)
        // 200 watches with 7 KB of metadata each: 1.4 MB, more than the whole budget. Those
        // admitted stayed open for good, over the budget (audit 32 F1); now the excess is shed,
        // and what stays open (admitted again once there was room) fits in the budget.
        let hog = try HTTP2TestClient(port: server.port)
        let pad = String(repeating: "p", count: 7000)
        let streams = try (0..<200).map { _ in
            try hog.start(HealthMethods.watch.path, extra: [("x-pad", pad)], messages: [watchRequest])
        }
        let settled = await offThePool {
            hog.read(seconds: 60) {
                let (shed, open) = Self.shedAndOpen(streams, on: hog)
                return shed > 0 && open * 7000 < 1_048_576
            }
        }
        #expect(settled, "shed and still open: \(Self.shedAndOpen(streams, on: hog))")
        let codes = Set(streams.compactMap { hog.response($0)?.trailers["grpc-status"] })
        #expect(codes == [String(StatusCode.resourceExhausted.rawValue)], "\(codes)")
        #expect(await server.waitForLog("event=memory_budget_shed"))
        // The bystander's watch is still open, and it is served.
        #expect(bystander.response(kept)?.ended == false)
        let check = try bystander.start(HealthMethods.check.path, messages: [watchRequest])
        let answer = await offThePool { bystander.read(check) { $0.ended } }
        #expect((answer?.trailers.isEmpty ?? true ? answer?.headers : answer?.trailers)?["grpc-status"] == "0",
                "\(String(describing: answer))")
        #expect(bystander.response(kept)?.ended == false)
    }

    /// How many of `streams` were shed for the memory budget, and how many are still open.
    static func shedAndOpen(_ streams: [Int32], on client: HTTP2TestClient) -> (shed: Int, open: Int) {
        let responses = streams.compactMap { client.response($0) }
        let shed = responses.filter {
            $0.trailers["grpc-message"].map { GRPCPercentEncoding.decode($0.utf8) }?
                .contains("its open streams were ended") == true
        }
        return (shed.count, responses.filter { !$0.ended }.count)
    }

    @Test("requests that send their headers and nothing more are held bytes too: a connection keeping them is ended")
    func headersOnlyRequestsAreBounded() async throws {
        let server = try await ServerProcess(arguments: ["--frame-timeout", "1", "--no-seed"])
        defer { server.stop() }
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        // Fifty unary calls, each with 4 KB of metadata, that never send their message.
        let hog = try HTTP2TestClient(port: server.port)
        let pad = String(repeating: "p", count: 4000)
        for _ in 0..<50 { _ = try hog.start(Self.getLocation, extra: [("x-pad", pad)], messages: [], endInput: false) }
        let closed = try await offThePool { () throws -> Bool in hog.readUntilClosed(seconds: 60) }
        #expect(closed, "the connection holding request heads was not ended")
        #expect(await server.waitForLog("event=frame_timeout"))
        #expect(hog.goaways.last?.code == .enhanceYourCalm, "\(hog.goaways)")
        #expect(try await lean.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
    }

    @Test("a client that never opens its flow-control window: calls are refused past --max-output-bytes, and the connection is ended at the write-stall timeout")
    func closedWindowIsBounded() async throws {
        // The write-stall timeout leaves the 60 calls time to reach the server and be refused
        // first, however slowly a busy machine runs them.
        let server = try await ServerProcess(arguments: ["--max-output-bytes", "65536", "--write-stall-timeout", "15", "--no-seed"])
        defer { server.stop() }
        var options = GRPCClientSession.Options()
        options.initialWindowSize = 0
        let hog = try HTTP2TestClient(port: server.port, options: options)
        // Calls answered on the loop, a few KB each: their responses wait in the server's session.
        let path = ServerReflectionMethods.listServices.path
        let request = ProtoCodec.encode(ListServicesRequest())
        let ids = try (0..<60).map { _ in try hog.start(path, messages: [request]) }
        let last = try #require(ids.last)
        let refused = try await offThePool { () throws -> GRPCClientSession.Response? in
            hog.read(last) { !$0.trailers.isEmpty }
        }
        #expect(refused?.trailers["grpc-status"] == String(StatusCode.resourceExhausted.rawValue), "\(String(describing: refused))")
        let message = GRPCPercentEncoding.decode((refused?.trailers["grpc-message"] ?? "").utf8)
        #expect(message.contains("bytes of replies unread (limit 65536, --max-output-bytes)"), "\(message)")
        let closed = try await offThePool { () throws -> Bool in hog.readUntilClosed(seconds: 60) }
        #expect(closed, "the connection that never opened its window was not ended")
        #expect(hog.goaways.last?.code == .enhanceYourCalm, "\(hog.goaways)")
        #expect(await server.waitForLog("event=write_stall"))
        // A well-behaved client is served throughout.
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        #expect(try await lean.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
    }

    @Test("an unknown method is answered UNIMPLEMENTED at its headers however the client streams, and what the session answers itself is counted and access-logged")
    func unknownMethodsAreAnsweredAtOnceAndSessionAnswersAreCounted() async throws {
        let server = try await ServerProcess(arguments: ["--access-log", "--idle-timeout", "3600"])
        defer { server.stop() }
        let client = try HTTP2TestClient(port: server.port)
        // A client that opens a stream and waits for the server, as a bidirectional call does:
        // before, nothing came until the frame timeout ended the whole connection (10 s).
        let waiting = try client.start("/example.Chat/Stream", endInput: false)
        // Two messages, then the half-close: before, INTERNAL ("takes one request message").
        let twoMessages = try client.start("/example.Chat/Stream", messages: [[1], [2]])
        for stream in [waiting, twoMessages] {
            let response = await offThePool { client.read(stream) { $0.ended } }
            #expect(response?.trailers["grpc-status"] == "\(StatusCode.unimplemented.rawValue)", "\(String(describing: response))")
            #expect(response?.trailers["grpc-message"]?.contains("unknown method") == true)
        }
        // Answered by the HTTP/2 session itself: a wrong content-type (415), a malformed
        // grpc-timeout.
        let wrongType = try client.start(Self.getLocation, messages: [[]], contentType: "application/json")
        let badTimeout = try client.start(Self.getLocation, extra: [("grpc-timeout", "soon")], messages: [[]])
        #expect(await offThePool { client.read(wrongType) { $0.ended } }?.headers[":status"] == "415")
        #expect(await offThePool { client.read(badTimeout) { $0.ended } }?.trailers["grpc-status"]
            == "\(StatusCode.invalidArgument.rawValue)")
        #expect(client.goaways.isEmpty, "the connection serves on")

        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        let metrics = try await lean.call(AdminMethods.getMetrics, GetMetricsRequest())
        let get = metrics.methods.first { $0.method == Self.getLocation }
        #expect(get?.callsByCode == ["INVALID_ARGUMENT": 2] && get?.callsStarted == 2, "\(String(describing: get))")
        let unknown = metrics.methods.first { $0.method == "unknown" }
        #expect(unknown?.callsByCode == ["UNIMPLEMENTED": 2], "\(String(describing: unknown))")
        #expect(await server.waitForLog("method=\(Self.getLocation) status=INVALID_ARGUMENT message=\"content-type"))
        #expect(await server.waitForLog("method=\(Self.getLocation) status=INVALID_ARGUMENT message=\"grpc-timeout"))
    }

    @Test("a protocol error nghttp2 catches itself (HEADERS on an even stream id) is logged as the GOAWAY it sends")
    func protocolErrorsCaughtByTheEngineAreLogged() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        func literal(_ name: String, _ value: String) -> [UInt8] {
            [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
        }
        let block = literal(":method", "POST") + literal(":scheme", "http") + literal(":path", Self.getLocation)
            + literal(":authority", "localhost") + literal("content-type", "application/grpc")
        let settings: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]
        // HEADERS (type 1), END_STREAM | END_HEADERS, stream 2: only servers open even streams.
        let headers: [UInt8] = [0, 0, UInt8(block.count), 1, 0x5, 0, 0, 0, 2] + block
        connection.send(HTTP2Preface.bytes + settings + headers)
        #expect(await server.waitForLog("event=http2_connection_failed"))
        // With nghttp2's own words for it (its GOAWAY's debug data).
        let line = server.stderr.split(separator: "\n").first { $0.contains("event=http2_connection_failed") } ?? ""
        #expect(line.contains("PROTOCOL_ERROR") && line.contains("stream_id"), "\(line)")
    }

    @Test("SIGTERM: a call an HTTP/2 client sent before it saw the shutdown notice is served, and the final GOAWAY counts it")
    func aCallRacingTheShutdownNoticeIsServed() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed", "--drain-timeout", "120"])
        defer { server.stop() }
        let client = try HTTP2TestClient(port: server.port)
        // A reflection stream left open keeps a call in flight, so the drain lasts until it ends
        // (its first answer shows it started before the SIGTERM).
        let listServices = ProtoCodec.encode(GrpcReflectionV1ServerReflectionRequest(messageRequest: .listServices("")))
        let reflection = try client.start(GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path,
                                          messages: [listServices], endInput: false)
        #expect(await offThePool { client.read(reflection) { !$0.messages.isEmpty } }?.messages.count == 1)
        _ = kill(server.processIdentifier, SIGTERM)
        #expect(await server.waitForLog("event=draining"))
        // This client has read nothing since: its next call goes out before it has seen the
        // GOAWAY and PING the server sent. Before, it was answered UNAVAILABLE ("server is
        // shutting down") although the final GOAWAY then counted it as processed.
        let create = ProtoCodec.encode(CreateLocationRequest(location: Location(name: "Raced", colorHex: "#010203")))
        let racing = try client.start(Self.createLocation, messages: [create])
        let response = await offThePool { client.read(racing) { $0.ended } }
        #expect(response?.trailers["grpc-status"] == "0", "\(String(describing: response))")
        let created = try response?.messages.first.map { try ProtoCodec.decode(Location.self, from: $0) }
        #expect(created?.name == "Raced")
        // The client has answered the PING by now: the final GOAWAY names the racing stream.
        client.endInput(reflection)
        #expect(await offThePool { client.readUntilClosed(seconds: 60) })
        #expect(client.goaways.last.map { $0.lastStreamID >= racing && $0.code == .noError } == true, "\(client.goaways)")
        #expect(server.stop() == 0)
    }

    @Test("SIGTERM: a client that never answers the drain's PING still gets the final GOAWAY, naming the calls served, and the server exits")
    func theFinalGoawayComesWithoutThePingAnswer() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed"])
        defer { server.stop() }
        var options = GRPCClientSession.Options()
        options.acknowledgesPings = false
        let client = try HTTP2TestClient(port: server.port, options: options)
        let create = ProtoCodec.encode(CreateLocationRequest(location: Location(name: "Served", colorHex: "#010203")))
        let served = try client.start(Self.createLocation, messages: [create])
        #expect(await offThePool { client.read(served) { $0.ended } }?.trailers["grpc-status"] == "0")
        _ = kill(server.processIdentifier, SIGTERM)
        #expect(await offThePool { client.readUntilClosed(seconds: 60) })
        // Before, only the shutdown notice (last stream id 2³¹−1) came: the client never learned what was served.
        #expect(client.goawaysOnTheWire == [.init(lastStreamID: Int32.max, code: .noError),
                                            .init(lastStreamID: served, code: .noError)], "\(client.goawaysOnTheWire)")
        #expect(server.stop() == 0)
    }

    @Test("SIGTERM: a client with no call that never answers the drain's PING is closed, while another connection's stream keeps the drain going")
    func aSilentClientIsNotKeptByAnothersStream() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed", "--drain-timeout", "300"])
        defer { server.stop() }
        let streaming = try HTTP2TestClient(port: server.port)
        let listServices = ProtoCodec.encode(GrpcReflectionV1ServerReflectionRequest(messageRequest: .listServices("")))
        let reflection = try streaming.start(GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path,
                                             messages: [listServices], endInput: false)
        #expect(await offThePool { streaming.read(reflection) { !$0.messages.isEmpty } }?.messages.count == 1)
        var options = GRPCClientSession.Options()
        options.acknowledgesPings = false
        let silent = try HTTP2TestClient(port: server.port, options: options)
        let check = try silent.start(HealthMethods.check.path, messages: [ProtoCodec.encode(HealthCheckRequest())])
        #expect(await offThePool { silent.read(check) { $0.ended } }?.trailers["grpc-status"] == "0")
        _ = kill(server.processIdentifier, SIGTERM)
        // Before, it got its final GOAWAY only with the other connection, at the end of the
        // drain (--drain-timeout: here 300 s, past this wait).
        #expect(await offThePool { silent.readUntilClosed(seconds: 120) })
        #expect(silent.goawaysOnTheWire == [.init(lastStreamID: Int32.max, code: .noError),
                                            .init(lastStreamID: check, code: .noError)], "\(silent.goawaysOnTheWire)")
        streaming.endInput(reflection)
        #expect(await offThePool { streaming.readUntilClosed(seconds: 60) })
        #expect(server.stop() == 0)
    }

    /// A client gone silent with a Watch open (its host vanished, its process stopped) is asked
    /// with a PING and, with no answer, closed: before, the open stream kept it from the idle
    /// timeout and nothing else ever ended it (audit 34 M1).
    @Test("keepalive: a silent client with a Watch open gets a PING, and with no answer its connection is closed")
    func aSilentClientWithAWatchIsClosedAfterAnUnansweredPing() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed", "--keepalive-time", "1", "--keepalive-timeout", "1"])
        defer { server.stop() }
        var options = GRPCClientSession.Options()
        options.acknowledgesPings = false
        let silent = try HTTP2TestClient(port: server.port, options: options)
        let watch = try silent.start(HealthMethods.watch.path, messages: [ProtoCodec.encode(HealthCheckRequest())])
        #expect(await offThePool { silent.read(watch) { !$0.messages.isEmpty } }?.messages.count == 1)
        #expect(await offThePool { silent.readUntilClosed(seconds: 120) })
        #expect(silent.pingsReceived >= 1)
        #expect(silent.goaways.last?.debugText.contains("did not answer a keepalive PING within 1 s") == true,
                "\(silent.goaways)")
        #expect(await server.waitForLog("event=keepalive_timeout"))
    }

    /// A client that answers keeps its Watch however long it stays quiet otherwise.
    @Test("keepalive: a client that answers the PINGs keeps its Watch open")
    func aClientAnsweringKeepalivePingsKeepsItsWatch() async throws {
        // A long answer time: a busy machine may take a while to schedule the client.
        let server = try await ServerProcess(arguments: ["--no-seed", "--keepalive-time", "1", "--keepalive-timeout", "60"])
        defer { server.stop() }
        let client = try HTTP2TestClient(port: server.port)
        let watch = try client.start(HealthMethods.watch.path, messages: [ProtoCodec.encode(HealthCheckRequest())])
        #expect(await offThePool { client.read(watch) { !$0.messages.isEmpty } }?.messages.count == 1)
        #expect(await offThePool { client.read(seconds: 120) { client.pingsReceived >= 3 } }, "PINGs, one at a time")
        #expect(client.goaways.isEmpty && client.response(watch)?.ended == false)
        let check = try client.start(HealthMethods.check.path, messages: [ProtoCodec.encode(HealthCheckRequest())])
        #expect(await offThePool { client.read(check) { $0.ended } }?.trailers["grpc-status"] == "0")
    }

    @Test("an idle HTTP/2 connection is ended with GOAWAY NO_ERROR")
    func idleConnectionGetsAGoaway() async throws {
        let server = try await ServerProcess(arguments: ["--idle-timeout", "1", "--no-seed"])
        defer { server.stop() }
        let idle = try HTTP2TestClient(port: server.port)
        let closed = try await offThePool { () throws -> Bool in idle.readUntilClosed(seconds: 60) }
        #expect(closed)
        #expect(idle.goaways.last?.code == .noError, "\(idle.goaways)")
    }

    /// One unary call on a connection of its own: headers, one message, end of input; the
    /// response once the stream ended (blocking: call it off the pool).
    static func unary(port: UInt16, _ path: String, _ message: [UInt8],
                      extra: [(String, String)] = []) throws -> GRPCClientSession.Response? {
        let client = try HTTP2TestClient(port: port)
        let stream = try client.start(path, extra: extra, messages: [message])
        return client.read(stream) { $0.ended }
    }

    /// A GetLocation whose bytes (preface first) go out in pieces of `firstPiece`, then one
    /// byte more each, each sent on its own with TCP_NODELAY and a pause between.
    static func callSplittingTheOutput(port: UInt16, firstPiece: Int,
                                       request: [UInt8]) throws -> GRPCClientSession.Response? {
        let connection = try RawConnection(port: port)
        var noDelay: Int32 = 1
        setsockopt(connection.fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let session = try GRPCClientSession()
        guard let stream = session.startCall(headers: GRPCClientSession.requestHeaders(path: getLocation)) else { return nil }
        session.sendMessage(streamID: stream, request)
        session.endInput(streamID: stream)
        var bytes: [UInt8] = []
        try session.writeOutput(into: &bytes)
        var offset = 0
        var piece = firstPiece
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            connection.send(Array(bytes[offset..<end]))
            offset = end
            piece += 1
            usleep(20_000)
        }
        // Read until the stream ends (each read bounded at 120 s).
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while session.responses[stream]?.ended != true {
            let count = buffer.withUnsafeMutableBytes { connection.receiveSome(into: $0, within: 120) }
            guard count > 0 else { break }
            try session.receive(Array(buffer[0..<count]))
            var acknowledgements: [UInt8] = []
            try session.writeOutput(into: &acknowledgements)
            connection.send(acknowledgements)
        }
        return session.responses[stream]
    }
}
