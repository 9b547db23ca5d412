import Foundation
import LarderAPI
import LarderClient
import LarderHTTP2
import LarderTestSupport
import LarderWire
import Testing

/// Issue 14's server defects, each against the real binary: token length, the memory
/// budget, decode limits, descriptor exhaustion, drain, half-close, inline calls at the
/// call limit, health of an unknown service, duplicate call ids.
@Suite("Server hardening", .offThePool)
struct HardeningEndToEndTests {
    static func envelope(_ callID: UInt64, _ path: String, _ payload: [UInt8] = [],
                         metadata: [String: String] = [:]) -> RequestEnvelope {
        RequestEnvelope(callID: callID, method: path, payload: payload, metadata: metadata)
    }

    static func listLocations(_ callID: UInt64) -> RequestEnvelope {
        envelope(callID, LocationMethods.listLocations.path, ProtoCodec.encode(ListLocationsRequest()))
    }

    static func health(_ callID: UInt64, service: String = "") -> RequestEnvelope {
        envelope(callID, HealthMethods.check.path, ProtoCodec.encode(HealthCheckRequest(service: service)))
    }

    /// `count` locations with long names, so that one ListLocations reply is about 25 KB per 200.
    static func addLocations(_ count: Int, to client: LarderClient) async throws {
        for index in 0..<count {
            let name = "Hardening location \(index) " + String(repeating: "x", count: 70)
            _ = try await client.call(LocationMethods.createLocation,
                                      CreateLocationRequest(location: Location(name: name, colorHex: "#102030")))
        }
    }

    static func client(_ server: ServerProcess) throws -> LarderClient {
        try LarderClient.loopback(port: server.port, timeout: .seconds(30))
    }

    /// Polls the server's metrics until no call but the metrics call itself is in flight (bounded: 60 s).
    static func waitUntilIdle(_ client: LarderClient) async throws {
        for _ in 0..<600 {
            if try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight <= 1 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("calls still in flight after 60 s")
    }

    /// Waits (up to 120 s: a bound, not a speed) until the server has answered `count`
    /// ListLocations calls in all: "no call in flight" alone also holds before a busy server
    /// has read the pipelined calls at all.
    static func waitUntilAnswered(_ count: Int, _ client: LarderClient) async throws {
        for _ in 0..<1200 {
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            let lists = metrics.methods.first { $0.method == LocationMethods.listLocations.path }?.totalCalls ?? 0
            if lists >= UInt64(count) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the server had not answered \(count) ListLocations calls after 120 s")
    }

    /// Frames of `count` pipelined ListLocations calls, ids 1...count.
    static func pipelinedLists(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for id in 1...count { Frame.append(ProtoCodec.encode(listLocations(UInt64(id))), to: &bytes) }
        return bytes
    }

    // MARK: - Item 1: bearer token

    @Test func aTokenWithTrailingBytesIsRefused() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("s3cret-token", in: directory)
        let server = try await ServerProcess(arguments: ["--auth-token-file", tokenFile])
        defer { server.stop() }
        // 256 and 512 extra bytes: a length difference that folds to zero in one byte.
        for presented in ["s3cret-token" + String(repeating: "x", count: 256),
                          "s3cret-token" + String(repeating: "x", count: 512),
                          "s3cret-toke", "s3cret-token x"] {  // (spaces around the value are trimmed, RFC 9110 §5.5)
            let client = try LarderClient.loopback(port: server.port, token: presented)
            defer { client.close() }
            await expectStatus(.unauthenticated) {
                try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            }
        }
        let authorized = try LarderClient.loopback(port: server.port, token: "s3cret-token")
        defer { authorized.close() }
        #expect(try await authorized.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 4)
    }

    /// Calls answered on the loop, pipelined far past what one pass handles (64 frames): all
    /// are answered, each once, and another connection is served meanwhile (audit 33: one
    /// connection's pipelined health checks were handled ~13,800 at a time, holding the loop).
    @Test func aLongPipelineIsHandledInPassesAndAllAnswered() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed"])
        defer { server.stop() }
        let count = 5000
        var bytes: [UInt8] = []
        for id in 1...count { Frame.append(ProtoCodec.encode(Self.health(UInt64(id))), to: &bytes) }
        let raw = try RawConnection(port: server.port)
        raw.send(bytes)
        let other = try Self.client(server)
        defer { other.close() }
        #expect(try await other.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        var seen = Set<UInt64>()
        while seen.count < count, let reply = raw.receive() {
            #expect(reply.statusCode == .ok)
            #expect(seen.insert(reply.callID).inserted, "answered twice: \(reply.callID)")
        }
        #expect(seen == Set(1...UInt64(count)))
        // The connection reads on after the last pass.
        raw.send(Self.health(UInt64(count + 1)))
        #expect(raw.receive()?.callID == UInt64(count + 1))
    }

    // MARK: - Item 2: memory budget and write stalls

    /// A peer whose unread replies use up the budget: its calls wait for it to read, the
    /// exhaustion is logged, and once it reads every call is answered OK.
    @Test func callsOfAPeerOverItsShareOfTheMemoryBudgetWaitForItToRead() async throws {
        let server = try await ServerProcess(arguments: ["--memory-budget-bytes", "1048576", "--write-stall-timeout", "0",
                                                   "--durability", "normal"])
        defer { server.stop() }
        let client = try Self.client(server)
        defer { client.close() }
        try await Self.addLocations(200, to: client)
        // 500 replies of ~27 KB (13.5 MB) to a peer that reads nothing at first.
        let raw = try RawConnection(port: server.port, receiveBufferBytes: 256 * 1024)
        let count = 500  // their requests held (~1 KB each) stay within the 1 MiB budget
        raw.send(Self.pipelinedLists(count))
        // While its replies sit unread the whole budget stays used up, so a tick logs it.
        #expect(await server.waitForLog("event=memory_budget_exhausted"))
        // Until the peer reads, what it holds stays in the budget, and the metrics show it.
        let held = try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).memoryHeldBytes
        #expect(held >= 1_048_576 / 2, "memory held: \(held)")
        var ok = 0, answered = 0
        var refusal = ""
        while answered < count, let reply = raw.receive() {
            answered += 1
            if reply.statusCode == .ok { ok += 1 } else { refusal = "\(reply.statusCode.name): \(reply.statusMessage)" }
        }
        #expect(answered == count, "every call is answered")
        #expect(ok == count, "none refused; one was \(refusal)")
        raw.send(Self.listLocations(UInt64(count + 1)))
        #expect(raw.receive()?.statusCode == .ok)
    }

    /// Calls parked for a peer that does not read end CANCELLED, without running, when it
    /// closes its socket (before, they ran: a parked write was applied with nobody told).
    @Test func parkedCallsOfAClosedConnectionEndWithoutRunning() async throws {
        let server = try await ServerProcess(arguments: ["--max-output-bytes", "16384", "--write-stall-timeout", "0",
                                                         "--durability", "normal", "--log-level", "debug"])
        defer { server.stop() }
        let client = try Self.client(server)
        defer { client.close() }
        try await Self.addLocations(200, to: client)
        let count = 400  // pages of ~27 KB: 10.8 MB, well over what the kernel's socket buffers take (4 MiB and a little)
        var raw: RawConnection? = try RawConnection(port: server.port, receiveBufferBytes: 4096)
        raw?.send(Self.pipelinedLists(count))
        #expect(await server.waitForLog("event=call_parked"))  // the connection is full
        // The calls that will run have run: what is in flight now waits for this peer to read,
        // some of it parked (the metrics say so; on a slow machine that may take a while).
        let waiting = try await Self.waitUntilSettled(client)
        let settled = waiting.callsInFlight - 1  // this call
        #expect(settled > 0, "calls wait")
        #expect(waiting.callsParked >= 1 && waiting.callsParked <= settled, "parked: \(waiting.callsParked) of \(settled)")
        #expect(waiting.callsParkedTotal >= UInt64(max(waiting.callsParked, 0)))
        raw?.resetOnClose()
        raw = nil  // reset: the server closes the connection
        var codes: [String: UInt64] = [:]
        for _ in 0..<1200 {
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            codes = metrics.methods.first { $0.method == LocationMethods.listLocations.path }?.callsByCode ?? [:]
            if codes.values.reduce(0, +) >= UInt64(count) && metrics.callsInFlight == 1 { break }  // this call
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(codes.values.reduce(0, +) == UInt64(count), "\(codes)")
        #expect((codes["CANCELLED"] ?? 0) >= 1, "the parked ones end CANCELLED: \(codes)")
        #expect(codes.keys.allSatisfy { $0 == "OK" || $0 == "CANCELLED" }, "\(codes)")
        #expect(try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).callsParked == 0)
    }

    /// The metrics once no call has ended for five looks in a row, 100 ms apart, and a call is
    /// parked (a peer that does not read: those left wait for it); the last look after 120 s.
    static func waitUntilSettled(_ client: LarderClient) async throws -> Metrics {
        var last: UInt64 = .max
        var unchanged = 0
        var metrics = Metrics()
        for _ in 0..<1200 {
            metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            let ended = metrics.methods.first { $0.method == LocationMethods.listLocations.path }?.totalCalls ?? 0
            unchanged = ended == last ? unchanged + 1 : 0
            last = ended
            if unchanged >= 5 && metrics.callsParked >= 1 { return metrics }
            try await Task.sleep(for: .milliseconds(100))
        }
        return metrics
    }

    @Test func aPeerThatStopsReadingIsDroppedAfterTheWriteStallTimeout() async throws {
        let server = try await ServerProcess(arguments: ["--write-stall-timeout", "1", "--durability", "normal"])
        defer { server.stop() }
        let client = try Self.client(server)
        defer { client.close() }
        try await Self.addLocations(200, to: client)
        let raw = try RawConnection(port: server.port, receiveBufferBytes: 256 * 1024)
        raw.send(Self.pipelinedLists(150))
        #expect(await server.waitForLog("event=write_stall", seconds: 120))
        #expect(raw.isClosedByServer())
        // Its replies are given back to the budget: a later connection's close reports none held.
        try await Self.waitUntilIdle(client)
        let later = try RawConnection(port: server.port)
        later.send(Self.health(1))
        #expect(later.receive()?.statusCode == .ok)
        later.shutdownSending()
        #expect(later.isClosedByServer())
        var released = false
        for _ in 0..<100 where !released {
            released = server.stderr.split(separator: "\n").last { $0.contains("event=connection_closed") }?
                .contains("budget_bytes=0") == true
            if !released { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(released, "no bytes stay counted once the stalled peer is gone")
        #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 204)
    }

    // MARK: - Item 3: partial frames count against the budget

    @Test func partialFramesCountAgainstTheMemoryBudget() async throws {
        // A frame timeout well beyond the sends below (4 × up to 1 s, on a busy machine more), so
        // the partial frames are all held when the budget is looked at.
        let server = try await ServerProcess(arguments: ["--memory-budget-bytes", "1048576", "--frame-timeout", "20"])
        defer { server.stop() }
        // Four peers each start a 3 MiB frame: 12 MiB of partial frames against a 1 MiB budget.
        var peers: [RawConnection] = []
        for _ in 0..<4 {
            let peer = try RawConnection(port: server.port)
            var bytes: [UInt8] = []
            Frame.appendHeader(length: try #require(FrameLength(exactly: 3 * 1024 * 1024)), to: &bytes)
            bytes += [UInt8](repeating: 0x0A, count: 3 * 1024 * 1024 - 1)
            _ = peer.sendWithoutBlocking(bytes, seconds: 1)
            peers.append(peer)
        }
        #expect(await server.waitForLog("event=memory_budget_exhausted", seconds: 60))
        // Others are still served: health is answered on the loop and holds nothing.
        let probe = try RawConnection(port: server.port)
        probe.send(Self.health(1))
        #expect(probe.receive()?.statusCode == .ok)
        // The frame timeout still cuts the partial frames off.
        for peer in peers {
            #expect(peer.isClosedByServer())
        }
        probe.send(Self.listLocations(2))
        #expect(probe.receive()?.statusCode == .ok)
    }

    // MARK: - Item 4: decode-heavy frames

    @Test func decodeHeavyFramesAreRefusedPerCall() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)

        // 300 metadata entries: over the 8 KiB metadata limit (each counts its bytes + 32).
        var metadata: [String: String] = [:]
        for index in 0..<300 { metadata["key-\(index)"] = "value" }
        raw.send(Self.envelope(1, LocationMethods.listLocations.path, metadata: metadata))
        var reply = try #require(raw.receive())
        #expect(reply.callID == 1 && reply.statusCode == .resourceExhausted, "\(reply.statusMessage)")
        #expect(reply.statusMessage.contains("metadata"))

        // An update mask of 5,000 paths: over the 1,000 elements of one repeated field.
        let mask = UpdateLocationRequest(location: Location(id: UUID().uuidString.lowercased(), name: "x", colorHex: "#000000"),
                                         updateMask: FieldMask(paths: Array(repeating: "name", count: 5000)))
        raw.send(Self.envelope(2, LocationMethods.updateLocation.path, ProtoCodec.encode(mask)))
        reply = try #require(raw.receive())
        #expect(reply.callID == 2 && reply.statusCode == .resourceExhausted, "\(reply.statusMessage)")
        #expect(reply.statusMessage.contains("paths"), "\(reply.statusMessage)")

        // 200 unknown fields in a payload.
        var unknown: [UInt8] = []
        for number in 0..<200 { unknown += ProtobufWireBytes.varint(UInt64(100 + number) << 3) + [0] }
        raw.send(Self.envelope(3, LocationMethods.listLocations.path, unknown))
        reply = try #require(raw.receive())
        #expect(reply.callID == 3 && reply.statusCode == .resourceExhausted, "\(reply.statusMessage)")
        #expect(reply.statusMessage.contains("unknown fields"), "\(reply.statusMessage)")

        // An envelope of 20,000 fields (call_id over and over): the call is refused, by the last id.
        var body: [UInt8] = []
        for _ in 0..<20_000 { body += [0x08, 0x04] }
        raw.send(Frame.encode(body))
        reply = try #require(raw.receive())
        #expect(reply.callID == 4 && reply.statusCode == .resourceExhausted, "\(reply.statusMessage)")

        // The connection survived all of it.
        raw.send(Self.listLocations(5))
        reply = try #require(raw.receive())
        #expect(reply.callID == 5 && reply.statusCode == .ok)
    }

    /// An update mask written 4,999 times, one path each (a 40 KB frame within every other
    /// bound): protobuf-c merged the repeats in quadratic time and memory (~99 MB and ~19 ms of
    /// the event loop per frame). Refused at its ninth occurrence, over either protocol, with
    /// the connection serving on.
    @Test func aMessageFieldRepeatedThousandsOfTimesIsRefusedOverBothProtocols() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let path: [UInt8] = [0x0A, 0x04] + Array("name".utf8)  // FieldMask.paths = "name"
        let payload = Array(repeating: [0x12, UInt8(path.count)] + path, count: 4_999).flatMap { $0 }  // update_mask
        let message = "larder.v1.UpdateMealRecordRequest has update_mask more than 8 times: a message field that is not "
            + "repeated may occur at most 8 times (encoders write it once)"

        let raw = try RawConnection(port: server.port)
        raw.send(Self.envelope(1, MealRecordMethods.updateMealRecord.path, payload))
        let reply = try #require(raw.receive())
        #expect(reply.callID == 1 && reply.statusCode == .invalidArgument, "\(reply.statusMessage)")
        #expect(reply.statusMessage == message)
        raw.send(Self.listLocations(2))
        let next = try #require(raw.receive())
        #expect(next.callID == 2 && next.statusCode == .ok, "the connection serves on")

        let response = try await offThePool { () throws -> GRPCClientSession.Response? in
            try HTTP2EndToEndTests.unary(port: server.port, MealRecordMethods.updateMealRecord.path, payload)
        }
        let http2 = try #require(response)
        let status = http2.trailers["grpc-status"] ?? http2.headers["grpc-status"]
        let http2Message = GRPCPercentEncoding.decode((http2.trailers["grpc-message"] ?? http2.headers["grpc-message"] ?? "").utf8)
        #expect(status == String(StatusCode.invalidArgument.rawValue), "\(http2.headers) \(http2.trailers)")
        #expect(http2Message == message)
    }

    /// Lines a peer causes at will are rate-limited: 10,000 calls with a wrong token wrote 10,000
    /// `unauthenticated` lines (362 MB in 3 s with 4 KB method names). Now each is either one
    /// of a few lines or counted in a `log_suppressed` line, written once its 5 s are over.
    @Test func tenThousandRefusedCallsWriteAFewLinesAndTheirCount() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-logflood")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("flood-token", in: directory)
        let server = try await ServerProcess(arguments: ["--auth-token-file", tokenFile])
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        let batches = 100, perBatch = 100
        let refused = await offThePool { () -> Int in
            var refused = 0
            for batch in 0..<batches {
                var bytes: [UInt8] = []
                for index in 0..<perBatch {
                    let envelope = Self.envelope(UInt64(batch * perBatch + index + 1), LocationMethods.listLocations.path,
                                                 ProtoCodec.encode(ListLocationsRequest()),
                                                 metadata: ["authorization": "Bearer wrong-token"])
                    Frame.append(ProtoCodec.encode(envelope), to: &bytes)
                }
                raw.send(bytes)
                for _ in 0..<perBatch where raw.receive()?.statusCode == .unauthenticated { refused += 1 }
            }
            return refused
        }
        #expect(refused == batches * perBatch)
        let accounted = await eventually(seconds: 60) { Self.unauthenticatedLines(server.stderr).total == refused }
        let (written, total) = Self.unauthenticatedLines(server.stderr)
        #expect(accounted, "\(written) lines and \(total - written) counted, of \(refused)")
        #expect(written >= 10 && written < 1_000, "\(written) lines")
        #expect(server.stderr.contains("event=log_suppressed suppressed=unauthenticated lines="))
    }

    /// `unauthenticated` lines written, and those plus the ones `log_suppressed` lines count.
    static func unauthenticatedLines(_ log: String) -> (written: Int, total: Int) {
        var written = 0, suppressed = 0
        for line in log.split(separator: "\n") {
            if line.contains(" event=unauthenticated ") { written += 1 }
            if let range = line.range(of: "event=log_suppressed suppressed=unauthenticated lines=") {
                suppressed += Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
            }
        }
        return (written, written + suppressed)
    }

    // MARK: - A file-size limit

    /// A file-size limit (ulimit -f, systemd's LimitFSIZE=) reached by the database is a full
    /// database for that write (RESOURCE_EXHAUSTED), not a SIGXFSZ that kills the server; what
    /// was acknowledged before stays readable.
    @Test func aFileSizeLimitIsAFullDatabaseNotADeadServer() async throws {
        let server = try await ServerProcess(fileSizeLimitBytes: 512 * 1024)
        defer { server.stop() }
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        var acknowledged: [MealRecord] = []
        var refusal: RPCError?
        for index in 0..<20_000 where refusal == nil {
            do {
                acknowledged.append(try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: "meal \(index) " + String(repeating: "x", count: 80), calories: 1,
                                           category: .lunch))))
            } catch {
                refusal = error
            }
        }
        // The limit is far below what the WAL alone reaches: said at start (audit 21 L2).
        #expect(server.stderr.contains("level=warn event=file_size_limit_low db=\(server.databasePath) limit_bytes=524288"),
                "\(server.stderr)")
        let error = try #require(refusal, "512 KiB never filled")
        #expect(error.code == .resourceExhausted && error.message.contains("full"), "\(error)")
        #expect(error.message.contains("reached the file-size limit of 524288 bytes"), "the cause is named: \(error)")
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        for meal in acknowledged.suffix(5) {
            #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)) == meal)
        }
        #expect(server.stop() == 0, "the server was alive to drain: \(server.stderr.suffix(2000))")
    }

    // MARK: - Item 6: out of file descriptors

    /// Out of descriptors, the connection silent longest (a second or more) makes room for a
    /// newcomer, as at --max-connections: silent connections cannot lock out a server whose
    /// descriptor limit is below --max-connections (before, every newcomer was refused).
    @Test func outOfDescriptorsASilentConnectionMakesRoom() async throws {
        let server = try await ServerProcess(descriptorLimit: 64)
        defer { server.stop() }
        var silent: [RawConnection] = []
        for _ in 0..<80 {
            guard let connection = try? RawConnection(port: server.port) else { break }
            silent.append(connection)
        }
        #expect(await server.waitForLog("event=accept_failed", seconds: 120), "the server ran out of descriptors")
        try await Task.sleep(for: .milliseconds(1100))  // silent for a second or more
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(30))
        defer { client.close() }
        #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 4)
        #expect(await server.waitForLog("reason=\"out of file descriptors\""), "\(server.stderr.suffix(2000))")
        // The one evicted was told why (read without waiting: the others have nothing to read).
        var buffer = [UInt8](repeating: 0, count: 512)
        let told = silent.contains { connection in
            let count = recv(connection.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            return count > 0 && String(decoding: buffer.prefix(count), as: UTF8.self).contains(
                "server is out of file descriptors (limit 64), and this one had sent nothing")
        }
        #expect(told, "the evicted connection is told why")
    }

    @Test func runningOutOfDescriptorsBacksOffAndRecovers() async throws {
        let server = try await ServerProcess(descriptorLimit: 64)
        defer { server.stop() }
        // 64 descriptors cannot hold the default 10,000 connections: said at start.
        #expect(server.stderr.contains("event=descriptor_limit_low limit=64 max_connections=10000"), "\(server.stderr)")
        // More clients than descriptors: the kernel completes their connections (backlog),
        // the server cannot accept them all.
        var clients: [Int32] = []
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = server.port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            clients.append(fd)
        }
        #expect(await server.waitForLog("event=accept_failed", seconds: 120))
        // Those it cannot take are refused through its spare descriptor, saying why, rather
        // than left to hang in the backlog.
        #expect(await server.waitForLog("reason=\"out of file descriptors (limit 64)", seconds: 120))
        var buffer = [UInt8](repeating: 0, count: 512)
        let refused = clients.filter { fd in
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            return count > 0 && String(decoding: buffer.prefix(count), as: UTF8.self).contains(
                "server is out of file descriptors (limit 64)")
        }
        #expect(!refused.isEmpty, "no client was told the server is out of descriptors")
        try await Task.sleep(for: .seconds(3))
        let lines = server.stderr.split(separator: "\n").filter { $0.contains("event=accept_failed") }
        // One line at once, then at most one per 5 s interval, each with the count of failures.
        // The spacing is read from the lines' own timestamps, not from how long this test slept:
        // on a busy run the sleep can last many intervals.
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.contains("failures=") })
        let stamps = lines.compactMap(Self.timestamp(of:))
        #expect(stamps.count == lines.count, "every line has a ts=: \(lines)")
        for (earlier, later) in zip(stamps, stamps.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 4, "accept_failed lines far closer than the 5 s interval: \(lines)")
        }
        for fd in clients { close(fd) }
        // Once the clients are gone, the server accepts and serves again.
        var served = false
        for _ in 0..<100 where !served {
            if let probe = try? RawConnection(port: server.port) {
                probe.send(Self.health(1))
                served = probe.receive()?.statusCode == .ok
            }
            if !served { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(served)
        #expect(server.stop() == 0)
    }

    /// The time in a log line's `ts=2026-11-30T08:00:00.123Z` field.
    static func timestamp(of line: Substring) -> Date? {
        guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("ts=") }) else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: String(field.dropFirst(3)))
    }

    // MARK: - Item 7: SIGTERM exits once the last reply is written

    @Test func sigtermExitsAsSoonAsBufferedRepliesAreWritten() async throws {
        // A per-connection output limit above what is buffered, and no write-stall timeout (the
        // peer reads nothing for as long as the server takes): this test is about the drain alone.
        let server = try await ServerProcess(arguments: ["--drain-timeout", "600", "--durability", "normal",
                                                   "--max-output-bytes", "268435456", "--write-stall-timeout", "0",
                                                   "--access-log"])
        let client = try Self.client(server)
        try await Self.addLocations(200, to: client)
        client.close()
        let raw = try RawConnection(port: server.port, receiveBufferBytes: 256 * 1024)
        let count = 200  // 5 MB of replies: more than the kernel's socket buffers take from a peer that does not read
        raw.send(Self.pipelinedLists(count))
        // The first reply means the server has read (and admitted) the whole batch.
        #expect(raw.receive()?.statusCode == .ok)
        kill(server.processIdentifier, SIGTERM)
        #expect(await server.waitForLog("event=draining"))
        // Every reply reaches the connection (the access log has a line per call) while this
        // peer reads nothing: the last one arrives with megabytes still unwritten.
        var delivered = 0
        // Up to 300 s: a bound for a server under TSan on a busy machine (60 s was cut short there).
        for _ in 0..<3000 where delivered < count {
            delivered = server.stderr.components(separatedBy: "method=\(LocationMethods.listLocations.path)").count - 1
            if delivered < count { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(delivered == count)
        var ok = 1
        while ok < count, let reply = raw.receive(), reply.statusCode == .ok { ok += 1 }
        #expect(ok == count, "every call in flight is answered")
        // stop() waits up to 30 s, then kills: well inside the 600 s drain timeout.
        #expect(server.stop() == 0)
        #expect(!server.stderr.contains("event=drain_timeout"))
        #expect(await server.waitForLog("event=stopped"))
    }

    // MARK: - Item 8: half-close

    @Test func aHalfClosedPeerStillGetsItsReplies() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        var bytes: [UInt8] = []
        for id in 1...5 {
            let create = CreateLocationRequest(location: Location(name: "Half close \(id)", colorHex: "#445566"))
            Frame.append(ProtoCodec.encode(Self.envelope(UInt64(id), LocationMethods.createLocation.path,
                                                         ProtoCodec.encode(create))), to: &bytes)
        }
        for id in 6...10 { Frame.append(ProtoCodec.encode(Self.listLocations(UInt64(id))), to: &bytes) }
        raw.send(bytes)
        raw.shutdownSending()
        var answered: Set<UInt64> = []
        while let reply = raw.receive() {
            #expect(reply.statusCode == .ok, "\(reply.statusMessage)")
            answered.insert(reply.callID)
        }
        #expect(answered == Set(1...10), "every call in flight is answered before the server closes")
        #expect(raw.isClosedByServer())
    }

    // MARK: - Item 9: inline calls at the per-connection limit

    @Test func healthReflectionAndAdminAreNotRefusedAtTheCallLimit() async throws {
        let server = try await ServerProcess(arguments: ["--max-calls-per-connection", "2"])
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        var bytes: [UInt8] = []
        var inline: Set<UInt64> = []
        for id in 1...40 {
            let callID = UInt64(id)
            let envelope: RequestEnvelope
            switch id % 4 {
            case 1: envelope = Self.health(callID)
            case 2: envelope = Self.envelope(callID, ReflectionMethods.listServices.path)
            case 3: envelope = Self.envelope(callID, AdminMethods.getMetrics.path)
            default: envelope = Self.listLocations(callID)
            }
            if id % 4 != 0 { inline.insert(callID) }
            Frame.append(ProtoCodec.encode(envelope), to: &bytes)
            // Deferred calls before them fill the limit.
            for extra in 0..<3 { Frame.append(ProtoCodec.encode(Self.listLocations(UInt64(1000 + id * 10 + extra))), to: &bytes) }
        }
        raw.send(bytes)
        var codes: [UInt64: StatusCode] = [:]
        for _ in 0..<(40 * 4) {
            guard let reply = raw.receive() else { break }
            codes[reply.callID] = reply.statusCode
        }
        #expect(codes.count == 160, "every call is answered")
        #expect(codes.values.contains(.resourceExhausted), "the limit was reached")
        for id in inline { #expect(codes[id] == .ok, "inline call \(id): \(codes[id]?.name ?? "no reply")") }
    }

    // MARK: - Item 12: health of an unknown service, duplicate call ids

    @Test func healthOfAnUnknownServiceIsNotFound() async throws {
        try await withServer { _, client in
            let error = await expectStatus(.notFound) {
                try await client.call(HealthMethods.check, HealthCheckRequest(service: "larder.v1.NoSuchService"))
            }
            #expect(error?.message.contains("larder.v1.NoSuchService") == true)
            let known = try await client.call(HealthMethods.check, HealthCheckRequest(service: "larder.v1.LocationService"))
            #expect(known.status == .serving)
        }
    }

    @Test func aDuplicateCallIDInFlightIsRefusedAndTheConnectionKept() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        var bytes: [UInt8] = []
        for envelope in [Self.listLocations(7), Self.listLocations(7), Self.listLocations(8)] {
            Frame.append(ProtoCodec.encode(envelope), to: &bytes)
        }
        raw.send(bytes)
        var replies: [(UInt64, StatusCode, String)] = []
        for _ in 0..<3 {
            let reply = try #require(raw.receive())
            replies.append((reply.callID, reply.statusCode, reply.statusMessage))
        }
        #expect(replies.filter { $0.0 == 7 && $0.1 == .ok }.count == 1)
        let duplicate = replies.filter { $0.0 == 7 && $0.1 == .invalidArgument }
        #expect(duplicate.count == 1)
        #expect(duplicate.first?.2.contains("already in flight") == true)
        #expect(replies.contains { $0.0 == 8 && $0.1 == .ok })
        // The id is free again once answered.
        raw.send(Self.listLocations(7))
        #expect(raw.receive()?.statusCode == .ok)
    }
}
