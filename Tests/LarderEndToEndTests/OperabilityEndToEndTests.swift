import Foundation
import LarderTestSupport
import LarderAPI
import LarderClient
import LarderWire
import Testing

@Suite("Reflection, metrics and health over a real server", .offThePool)
struct OperabilityEndToEndTests {
    @Test func reflectionListsExactlyTheServedServicesAndMethods() async throws {
        try await withServer { _, client in
            let services = try await client.call(ReflectionMethods.listServices, ListServicesRequest()).services
            #expect(services.map(\.name) == APIServices.all.map(\.name).sorted())
            let served = Dictionary(uniqueKeysWithValues: APIServices.all.flatMap(\.methods).map { ($0.path, $0) })
            let listed = services.flatMap(\.methods)
            #expect(Set(listed.map(\.fullName)) == Set(served.keys))
            #expect(listed.count == served.count)
            for method in listed {
                let descriptor = try #require(served[method.fullName])
                #expect(method.name == descriptor.name)
                #expect(method.inputType == descriptor.input.name)
                #expect(method.outputType == descriptor.output.name)
            }
        }
    }

    @Test func describeTypeReportsFieldsEnumsAndMaps() async throws {
        try await withServer { _, client in
            guard case .messageType(let meal)? = try await client.call(
                ReflectionMethods.describeType, DescribeTypeRequest(name: ".larder.v1.MealRecord")).type else {
                Issue.record("MealRecord is not described as a message")
                return
            }
            let descriptor = MealRecord.descriptor
            #expect(meal.name == "larder.v1.MealRecord")
            #expect(meal.fields.map(\.name) == descriptor.fields.map(\.name))
            #expect(meal.fields.map(\.number) == [1, 2, 3, 4, 5, 6, 7])
            let category = try #require(meal.fields.first { $0.name == "category" })
            #expect(category.type == .enum && category.typeName == "larder.v1.MealCategory" && category.label == .singular)
            let eatenAt = try #require(meal.fields.first { $0.name == "eaten_at" })
            #expect(eatenAt.jsonName == "eatenAt" && eatenAt.type == .message && eatenAt.typeName == "google.protobuf.Timestamp")

            let categories = try await client.call(ReflectionMethods.describeType,
                                                   DescribeTypeRequest(name: "larder.v1.MealCategory"))
            #expect(categories.type == .enumType(EnumType(name: "larder.v1.MealCategory", values: MealCategory.allCases.map {
                EnumValueInfo(name: $0.protoName, number: $0.rawValue)
            })))

            guard case .messageType(let metrics)? = try await client.call(
                ReflectionMethods.describeType, DescribeTypeRequest(name: "larder.admin.v1.MethodMetrics")).type else {
                Issue.record("MethodMetrics is not described as a message")
                return
            }
            let byCode = try #require(metrics.fields.first { $0.name == "calls_by_code" })
            #expect(byCode.label == .repeated)
            #expect(byCode.map?.key.type == .string && byCode.map?.value.type == .uint64)
            let buckets = try #require(metrics.fields.first { $0.name == "latency_bucket_counts" })
            #expect(buckets.label == .repeated && buckets.type == .uint64 && buckets.map == nil)

            guard case .messageType(let response)? = try await client.call(
                ReflectionMethods.describeType, DescribeTypeRequest(name: "larder.reflection.v1.DescribeTypeResponse")).type else {
                Issue.record("DescribeTypeResponse is not described as a message")
                return
            }
            #expect(response.fields.allSatisfy { $0.inOneof })

            await expectStatus(.notFound) {
                try await client.call(ReflectionMethods.describeType, DescribeTypeRequest(name: "larder.v1.Nope"))
            }
            // The envelopes are compiled in but no served method uses them.
            await expectStatus(.notFound) {
                try await client.call(ReflectionMethods.describeType, DescribeTypeRequest(name: "larder.rpc.v1.RequestEnvelope"))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(ReflectionMethods.describeType, DescribeTypeRequest(name: ""))
            }
        }
    }

    @Test func metricsServiceCountsCallsByMethodAndCode() async throws {
        try await withServer { _, client in
            let before = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            for _ in 0..<3 { _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest()) }
            for _ in 0..<2 {
                await expectStatus(.notFound) {
                    try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10"))
                }
            }
            await expectStatus(.unimplemented) { try await client.callRaw(path: "/larder.v1.Nope/Nothing", payload: []) }
            let after = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())

            func method(_ metrics: Metrics, _ path: String) -> MethodMetrics? { metrics.methods.first { $0.method == path } }
            let list = try #require(method(after, LocationMethods.listLocations.path))
            #expect(list.callsByCode == ["OK": (method(before, LocationMethods.listLocations.path)?.callsByCode["OK"] ?? 0) + 3])
            #expect(method(after, LocationMethods.getLocation.path)?.callsByCode == ["NOT_FOUND": 2])
            #expect(method(after, "unknown")?.callsByCode == ["UNIMPLEMENTED": 1])
            // The first GetMetrics has finished by the time of the second; the second is in flight:
            // started, not finished.
            #expect(method(after, AdminMethods.getMetrics.path)?.callsByCode == ["OK": 1])
            #expect(method(after, AdminMethods.getMetrics.path)?.callsStarted == 2)
            #expect(method(before, AdminMethods.getMetrics.path)?.callsStarted == 1)
            #expect(method(before, AdminMethods.getMetrics.path)?.totalCalls == 0)
            #expect(list.callsStarted == list.totalCalls && method(after, "unknown")?.callsStarted == 1)
            #expect(after.callsInFlight == 1)
            #expect(after.connectionsOpen == 1 && after.connectionsAccepted == 1)
            #expect(after.bytesReceived > before.bytesReceived && after.bytesSent > before.bytesSent)
            #expect(after.latencyBoundsSeconds.count == list.latencyBucketCounts.count - 1)
            #expect(after.latencyBoundsSeconds == after.latencyBoundsSeconds.sorted())
            for entry in after.methods {
                #expect(entry.latencyBucketCounts.reduce(0, +) == entry.totalCalls, "\(entry.method)")
                #expect(entry.latencySumSeconds > 0)
                #expect(entry.callsStarted >= entry.totalCalls)
            }
            #expect(after.methods.map(\.method) == after.methods.map(\.method).sorted())
            let startTime = try #require(after.startTime)
            #expect(abs(Double(startTime.seconds) - Date().timeIntervalSince1970) < 600)
        }
    }

    @Test func prometheusEndpointServesTheSameCounters() async throws {
        try await withServer(arguments: ["--metrics-listen", "127.0.0.1:0"]) { server, client in
            let port = try #require(await metricsPort(of: server))
            for _ in 0..<4 { _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest()) }
            await expectStatus(.invalidArgument) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "nope"))
            }
            let (status, body) = try httpRequest(port: port, path: "/metrics")
            #expect(status == 200)
            #expect(body.contains("# TYPE grpc_server_handled_total counter\n"))
            #expect(body.contains("# TYPE grpc_server_handling_seconds histogram\n"))
            let samples = prometheusSamples(body)
            let service = "grpc_type=\"unary\",grpc_service=\"larder.v1.LocationService\""
            let list = "\(service),grpc_method=\"ListLocations\""
            #expect(samples["grpc_server_handled_total{\(list),grpc_code=\"OK\"}"] == 4)
            #expect(samples["grpc_server_handled_total{\(service),grpc_method=\"GetLocation\",grpc_code=\"InvalidArgument\"}"] == 1)
            #expect(samples["grpc_server_handling_seconds_count{\(list)}"] == 4)
            #expect(samples["grpc_server_handling_seconds_bucket{\(list),le=\"+Inf\"}"] == 4)
            let buckets = body.split(separator: "\n").filter { $0.hasPrefix("grpc_server_handling_seconds_bucket{\(list),") }
            let counts = buckets.compactMap { line in line.split(separator: " ").last.flatMap { Double($0) } }
            #expect(counts.count == 18 && counts == counts.sorted(), "cumulative buckets")
            #expect(samples["larder_connections_open"] == 1)
            #expect(samples["larder_calls_in_flight"] == 0)
            #expect((samples["larder_received_bytes_total"] ?? 0) > 0 && (samples["larder_sent_bytes_total"] ?? 0) > 0)

            // A second scrape sees later calls.
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            #expect(prometheusSamples(try httpRequest(port: port, path: "/metrics").body)[
                "grpc_server_handled_total{\(list),grpc_code=\"OK\"}"] == 5)

            #expect(try httpRequest(port: port, path: "/").status == 404)
            #expect(try httpRequest(port: port, path: "/metrics/extra").status == 404)
            #expect(try httpRequest(port: port, method: "POST", path: "/metrics").status == 405)
            #expect(try httpRequest(port: port, path: "/metrics?x=1").status == 200)
            // RPC keeps working after scrapes.
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        }
    }

    /// A client trickling its request head (a byte every 0.5 s) held the endpoint, which served
    /// one connection at a time with a 2 s timeout per read, for as long as it kept trickling:
    /// every scrape waited. Now a scrape is served beside it, and the server ends the trickling
    /// connection when its head is not complete 2 s after the accept.
    @Test func aClientTricklingItsRequestHoldsUpNoScrape() async throws {
        try await withServer(arguments: ["--metrics-listen", "127.0.0.1:0"]) { server, _ in
            let port = try #require(await metricsPort(of: server))
            let slow = try RawConnection(port: port)
            let head = Array("GET /metrics HTTP/1.1\r\nX-Slow: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 100)
            #expect(slow.sendWithoutBlocking([head[0]], seconds: 10) == 1)
            let trickled = Task(executorPreference: BlockingWorkExecutor.shared) {
                await offThePool { () -> Int in
                    for index in 1..<head.count {
                        usleep(500_000)
                        if slow.sendWithoutBlocking([head[index]], seconds: 1) != 1 { return index }
                    }
                    return head.count
                }
            }
            try await Task.sleep(for: .milliseconds(500))  // the trickler is accepted first (not asserted)
            let scrape = try await offThePool { () throws -> (status: Int, body: String) in
                try httpRequest(port: port, path: "/metrics")
            }
            #expect(scrape.status == 200)
            #expect(scrape.body.contains("larder_connections_open"))
            let sent = await trickled.value
            #expect(sent < head.count, "the server ended the trickling connection (after \(sent) of \(head.count) bytes)")
        }
    }

    /// The metrics endpoint's own limits: a request head over 8 KiB is answered 400, one not
    /// complete 2 s after the accept 408; the endpoint serves on after both.
    @Test func anOversizeOrUnfinishedMetricsRequestGets400Or408() async throws {
        try await withServer(arguments: ["--metrics-listen", "127.0.0.1:0"]) { server, _ in
            let port = try #require(await metricsPort(of: server))
            /// The status line the server answers `bytes` with (waiting up to a minute for it).
            func statusLine(after bytes: [UInt8]) async throws -> String {
                let connection = try RawConnection(port: port)
                _ = connection.sendWithoutBlocking(bytes, seconds: 10)
                return await offThePool {
                    var received: [UInt8] = []
                    var chunk = [UInt8](repeating: 0, count: 4096)
                    for _ in 0..<6 {
                        let count = chunk.withUnsafeMutableBytes { connection.receiveSome(into: $0) }
                        if count > 0 { received += chunk[0..<count] }
                        if let line = String(decoding: received, as: UTF8.self).split(separator: "\r\n").first,
                           received.contains(UInt8(ascii: "\n")) { return String(line) }
                        if count == 0 { break }
                    }
                    return "no status line: \(String(decoding: received, as: UTF8.self))"
                }
            }
            let oversize = Array("GET /metrics HTTP/1.1\r\nX-Big: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 9000)
            #expect(try await statusLine(after: oversize) == "HTTP/1.1 400 Bad Request")
            #expect(try await statusLine(after: Array("GET /metrics HTTP/1.1\r\n".utf8)) == "HTTP/1.1 408 Request Timeout")
            #expect(try httpRequest(port: port, path: "/metrics").status == 200)
        }
    }

    @Test func reflectionAndMetricsNeedTheTokenWhenAuthIsOn() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-ops")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("ops-token", in: directory)
        try await withServer(arguments: ["--auth-token-file", tokenFile]) { server, anonymous in
            #expect(try await anonymous.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
            await expectStatus(.unauthenticated) { try await anonymous.call(ReflectionMethods.listServices, ListServicesRequest()) }
            await expectStatus(.unauthenticated) {
                try await anonymous.call(ReflectionMethods.describeType, DescribeTypeRequest(name: "larder.v1.Location"))
            }
            await expectStatus(.unauthenticated) { try await anonymous.call(AdminMethods.getMetrics, GetMetricsRequest()) }
            let authorized = try LarderClient.loopback(port: server.port, token: "ops-token")
            defer { authorized.close() }
            #expect(try await authorized.call(ReflectionMethods.listServices, ListServicesRequest()).services.count == 9)
            let metrics = try await authorized.call(AdminMethods.getMetrics, GetMetricsRequest())
            #expect(metrics.methods.first { $0.method == ReflectionMethods.listServices.path }?.callsByCode
                    == ["UNAUTHENTICATED": 1, "OK": 1])
        }
    }

    @Test func logLinesAreLogfmtWithTimeLevelEventAndConnectionAndCallIDs() async throws {
        try await withServer(arguments: ["--access-log"]) { server, client in
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            await expectStatus(.notFound) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10"))
            }
            await expectStatus(.unimplemented) { try await client.callRaw(path: "/larder.v1.Nope/Nothing", payload: []) }
            #expect(await server.waitForLog("status=UNIMPLEMENTED"))
            let lines = server.stderr.split(separator: "\n").map(String.init)
            let shape = #/^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(debug|info|warn|error) event=[a-z_]+( |$)/#
            for line in lines { #expect(line.contains(shape), "\(line)") }
            let calls = lines.filter { $0.contains(" event=call ") }
            #expect(calls.count == 3)
            let peer = #/ peer=127\.0\.0\.1:\d+ /#
            #expect(calls.allSatisfy { $0.contains(peer) }, "\(calls)")
            #expect(calls.first?.contains(
                #/level=info event=call conn=1 call=1 peer=\S+ method=/larder.v1.LocationService/ListLocations status=OK duration_us=\d+ bytes_in=\d+ bytes_out=\d+$/#) == true)
            #expect(calls.dropFirst().first?.contains(
                #/event=call conn=1 call=2 peer=\S+ method=/larder.v1.LocationService/GetLocation status=NOT_FOUND message=".+" duration_us=\d+ bytes_in=\d+ bytes_out=\d+$/#) == true)
            #expect(calls.last?.contains(
                "method=/larder.v1.Nope/Nothing status=UNIMPLEMENTED message=\"unknown method \\\"/larder.v1.Nope/Nothing\\\"\"") == true)
            // bytes_in and bytes_out are the frames on the wire: what the client wrote and read.
            let received = calls.compactMap { Int($0.firstMatch(of: #/bytes_in=(\d+)/#)?.output.1 ?? "") }
            let sent = calls.compactMap { Int($0.firstMatch(of: #/bytes_out=(\d+)/#)?.output.1 ?? "") }
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            #expect(received.count == 3 && sent.count == 3)
            #expect(UInt64(received.reduce(0, +)) < metrics.bytesReceived, "the GetMetrics frame came after them")
            #expect(UInt64(sent.reduce(0, +)) == metrics.bytesSent, "every reply before GetMetrics is written")
            #expect(lines.contains { $0.contains("level=debug event=connection_opened conn=1 peer=127.0.0.1:") })
        }
    }

    /// A write held up by a lock on the database keeps the server draining after
    /// SIGTERM; meanwhile health on an open connection says NOT_SERVING and other
    /// calls get UNAVAILABLE. Releasing the lock lets the write finish and the server exit 0.
    @Test func healthIsNotServingWhileDraining() async throws {
        // A drain timeout and a lock wait well beyond the test's steps, which take long under
        // TSan or on a busy machine: with the default 5 s busy timeout the held-up write failed
        // UNAVAILABLE, the drain ended, and the health calls below met a closed connection.
        let server = try await ServerProcess(arguments: ["--drain-timeout", "300", "--busy-timeout", "300"])
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                                      options: ClientOptions(defaultTimeout: .seconds(120)))
        defer { client.close() }
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)

        let lock = SpawnedProcess()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        lock.arguments = [server.databasePath]
        let input = Pipe()
        let output = Pipe()
        lock.standardInput = input
        lock.standardOutput = output
        try lock.run()
        input.fileHandleForWriting.writeRetryingInterrupts(Data("BEGIN IMMEDIATE;\nSELECT 'locked';\n".utf8))
        let locked = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        #expect(locked.contains("locked"))

        // Its own deadline covers every step until the lock is released, however slow the machine.
        let write = Task(executorPreference: BlockingWorkExecutor.shared) {
            try await client.call(LocationMethods.createLocation,
                                  CreateLocationRequest(location: Location(name: "Drain", colorHex: "#010203")),
                                  timeout: .seconds(300))
        }
        var inFlight: Int64 = 0
        let waitUntil = ContinuousClock.now + .seconds(120)
        while inFlight < 2 && ContinuousClock.now < waitUntil {
            inFlight = try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight
            if inFlight < 2 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(inFlight == 2, "the write waits for the lock")

        kill(server.processIdentifier, SIGTERM)
        #expect(await server.waitForLog("event=draining"))
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .notServing)
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest(service: "larder.v1.LocationService")).status
                == .notServing)
        await expectStatus(.unavailable) { try await client.call(LocationMethods.listLocations, ListLocationsRequest()) }

        input.fileHandleForWriting.writeRetryingInterrupts(Data("ROLLBACK;\n.quit\n".utf8))
        try input.fileHandleForWriting.close()
        _ = lock.exitStatus(waitingUpTo: 60)
        #expect(try await write.value.name == "Drain")
        #expect(server.stop() == 0)
        #expect(await server.waitForLog("event=stopped"))
    }

    /// A write still waiting for another process's lock when the drain timeout ends the drain
    /// gives up then (never committed, never acknowledged): the server exits, instead of
    /// waiting out the rest of its --busy-timeout (here 300 s; `stop` allows 30).
    @Test func aWriteWaitingForALockDoesNotHoldTheExitPastTheDrainTimeout() async throws {
        let server = try await ServerProcess(arguments: ["--drain-timeout", "1", "--busy-timeout", "300", "--no-seed"])
        let lock = try SQLiteLock(path: server.databasePath)
        defer { lock.release() }
        let raw = try RawConnection(port: server.port)
        raw.send(RequestEnvelope(callID: 1, method: LocationMethods.createLocation.path, payload: ProtoCodec.encode(
            CreateLocationRequest(location: Location(name: "Abandoned", colorHex: "#010203")))))
        let client = try LarderClient.loopback(port: server.port)
        defer { client.close() }
        #expect(await eventually {
            (try? await client.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight) == 2
        }, "the write waits for the lock")
        #expect(server.stop() == 0)
        #expect(await server.waitForLog("event=stopped"), "\(server.stderr)")
        #expect(server.stderr.contains("event=drain_timeout"), "\(server.stderr)")
        lock.release()
        let count = try await runProcess(URL(fileURLWithPath: "/usr/bin/sqlite3"),
                                         [server.databasePath, "SELECT count(*) FROM locations WHERE name = 'Abandoned'"],
                                         environment: [:])
        #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(count)")
    }
}
