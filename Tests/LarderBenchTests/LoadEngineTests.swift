import Foundation
import LarderAPI
import LarderTestSupport
import LarderWire
import Testing
@testable import LarderBench
import LarderSystem

@Suite("Load engine against a fake server")
struct LoadEngineTests {
    static func options(port: UInt16, _ extra: [String]) throws -> BenchOptions {
        let arguments = ["--server", "127.0.0.1:\(port)", "--warmup", "0s"] + extra
        guard case .run(let options) = try BenchArguments.parse(arguments) else {
            throw RPCError(.internal, "expected a run")
        }
        return options
    }

    @Test func closedLoopPingsCountEveryCall() async throws {
        let server = try PingServer()
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--requests", "300", "--concurrency", "8", "--connections", "2", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.calls == 300)
        #expect(result.errors == 0)
        #expect(result.lostCalls == 0)
        #expect(result.connectionFailures.isEmpty)
        #expect(result.latency.totalCount == 300)
        #expect(result.uncorrectedLatency == nil)
        #expect(result.seconds > 0)
        let seen = server.requestsByMethod
        #expect(seen.keys.sorted() == [HealthMethods.check.path])
        // Calls already in flight when the 300th completed also reached the server.
        #expect((300...(300 + 8)).contains(seen[HealthMethods.check.path] ?? 0))
    }

    @Test func openLoopReportsCorrectedAndUncorrectedLatency() async throws {
        let server = try PingServer()
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--requests", "200", "--rate", "2000", "--concurrency", "4", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.calls == 200)
        #expect(result.errors == 0)
        let uncorrected = try #require(result.uncorrectedLatency)
        #expect(uncorrected.totalCount == 200)
        // A run by count owes no calls past its 200, however far behind its schedule it ended.
        #expect(result.unsentCalls == 0)
        #expect(result.latency.totalCount == 200)
        // Measured from the intended start, a call can only look slower than from its send.
        #expect(result.latency.max >= uncorrected.max)
        #expect(result.latency.mean >= uncorrected.mean)
        // 200 calls at 2000/s are spread over about 0.1 s.
        #expect(result.seconds >= 0.09)
    }

    @Test func failedCallsAreCountedByStatusCode() async throws {
        let server = try PingServer { request in
            ResponseEnvelope(callID: request.callID, error: .notFound("no such thing"))
        }
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--requests", "50", "--concurrency", "2", "--connections", "1", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.calls == 50)
        #expect(result.callsByCode == [.notFound: 50])
        #expect(result.firstMessages[.notFound] == "no such thing")
    }

    @Test func aConnectionErrorFromTheServerIsReportedEscaped() async throws {
        let evil = "\u{1B}]0;PWNED\u{7}\u{1B}[2J\r\u{9B}31m\nforged line"
        let server = try PingServer { _ in
            ResponseEnvelope(callID: 0, statusCode: .resourceExhausted, statusMessage: "conn err " + evil)
        }
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--requests", "20", "--concurrency", "2", "--connections", "1", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        let expected = "RESOURCE_EXHAUSTED: connection error from server: conn err " + SafeText.escaped(evil)
        #expect(result.connectionFailures.contains(expected), "\(result.connectionFailures)")
        // Escaped once where it is recorded, it is inert in the report on stdout and in JSON.
        let inert = { (text: String) in text.unicodeScalars.allSatisfy { $0 == "\n" || !SafeText.needsEscape($0) } }
        for failure in result.connectionFailures { #expect(inert(failure), "\(failure.debugDescription)") }
        #expect(inert(BenchReport.text(result)))
        #expect(BenchReport.text(result).contains("  connection   " + expected + "\n"))
        #expect(inert(BenchReport.json(result)))
    }

    @Test func tokenTravelsAsAuthorizationMetadata() async throws {
        let server = try PingServer { request in
            request.metadata["authorization"] == "Bearer s3cret"
                ? ResponseEnvelope(callID: request.callID)
                : ResponseEnvelope(callID: request.callID, error: RPCError(.unauthenticated, "missing token"))
        }
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--requests", "20", "--concurrency", "1", "--token", "s3cret", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.callsByCode == [.ok: 20])
    }

    @Test func durationRunStopsAtItsEnd() async throws {
        let server = try PingServer()
        defer { server.stop() }
        let options = try Self.options(port: server.port, ["--duration", "2s", "--concurrency", "2"])
        var result = try await BenchRunner.run(options)
        // A starved test process may make no call in 2 s: such a run is made again (at most 3).
        for _ in 1..<3 where result.calls == 0 { result = try await BenchRunner.run(options) }
        #expect(result.seconds == 2)
        #expect(result.calls > 0)
        #expect(result.errors == 0)
    }

    @Test func mixSeedsDataAndReportsEachWorkload() async throws {
        let server = try PingServer { request in
            switch request.method {
            case LocationMethods.createLocation.path:
                let created = (try? ProtoCodec.decode(CreateLocationRequest.self, from: request.payload))?.location
                let id = String(request.callID, radix: 16)
                let location = Location(id: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - id.count) + id,
                                        name: created?.name ?? "", colorHex: created?.colorHex ?? "")
                return ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(location))
            case LocationMethods.getLocation.path:
                let id = (try? ProtoCodec.decode(GetLocationRequest.self, from: request.payload))?.id ?? ""
                return id.hasPrefix("00000000-0000-4000-8000-")
                    ? ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(Location(id: id)))
                    : ResponseEnvelope(callID: request.callID, error: .notFound("location \"\(id)\" not found"))
            case MealRecordMethods.createMealRecord.path:
                let meal = (try? ProtoCodec.decode(CreateMealRecordRequest.self, from: request.payload))?.mealRecord
                return ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(meal ?? MealRecord()))
            default:
                return ResponseEnvelope(callID: request.callID)
            }
        }
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--workload", "mix", "--mix", "get=50,create=30,list=20", "--requests", "400", "--concurrency", "4",
            "--seed-locations", "20", "--seed-meals", "10", "--time-limit", "300s",
        ])
        let notices = LockedValue<[String]>([])
        let result = try await BenchRunner.run(options) { notice in notices.withLock { $0.append(notice) } }
        #expect(result.callsByCode == [.ok: 400])
        #expect(result.seeded == ["20 locations", "10 meal records"])
        #expect(notices.withLock { $0 }.contains { $0.hasPrefix("creating 20 locations (named larder-bench-") })
        let workloads = result.byWorkload.keys.map(\.rawValue).sorted()
        #expect(workloads == ["create", "get", "list"])
        #expect(result.byWorkload.values.map(\.calls).reduce(0, +) == 400)
        #expect(result.byWorkload.values.allSatisfy { $0.calls > 0 && $0.errors == 0 })
        let seen = server.requestsByMethod
        // 20 + 10 seeding calls, then the mix.
        #expect((seen[LocationMethods.createLocation.path] ?? 0) == 20)
        #expect((seen[MealRecordMethods.createMealRecord.path] ?? 0) >= 10)
        #expect((seen[MealRecordMethods.listMealRecords.path] ?? 0) > 0)
    }

    @Test func aRunByCountThatItsTimeLimitEndsSaysSo() async throws {
        // A listener that never accepts: the kernel completes the connections, nobody answers.
        let silent = try boundLoopbackSocket(listening: 16)
        defer { close(silent.fd) }
        let options = try Self.options(port: silent.port, ["--requests", "10", "--concurrency", "4", "--time-limit", "1s"])
        let result = try await BenchRunner.run(options)
        #expect(result.calls == 0)
        let reason = try #require(result.stopReason)
        #expect(reason.contains("--time-limit 1s ended the run after 0 of 10 calls; 4 had no reply yet"))
        #expect(BenchReport.text(result).contains("stopped      --time-limit 1s"))
    }

    /// A frame length no Larder server sends, read from another protocol's first bytes, names it
    /// (the bench said only "a frame of 1213486160 bytes" to an HTTP/1 server).
    @Test(arguments: [
        (Array("HTTP".utf8), " (it starts with \"HTTP\": not a Larder server on that port?)"),
        ([0x16, 0x03, 0x01, 0x00], " (it starts like a TLS record: does the server want --tls?)"),
        ([0x7F, 0x00, 0x00, 0x00], ""),
    ] as [([UInt8], String)])
    func anImpossibleFrameLengthNamesTheProtocolItCameFrom(head: [UInt8], hint: String) {
        #expect(head.withUnsafeBufferPointer { LoadLoop.foreignProtocolHint($0.baseAddress!) } == hint)
    }

    @Test func refusedConnectionIsUnavailable() async throws {
        let options = try Self.options(port: try unusedLoopbackPort(), ["--requests", "5"])
        await #expect {
            try await BenchRunner.run(options)
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .unavailable && error?.message.contains("cannot connect to 127.0.0.1:") == true
        }
    }
}
