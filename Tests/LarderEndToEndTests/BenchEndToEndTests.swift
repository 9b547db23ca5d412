import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// `larder bench` against a real server: what it creates is gone afterwards,
/// also after Ctrl-C, and `--keep-data` / `--clean-up` do what they say.
@Suite("larder bench against larder-server", .offThePool)
struct BenchEndToEndTests {
    /// `larder bench` against `server`. A run by count that sets no `--time-limit` gets 600 s
    /// (the bench's own default, 60 s, is for people, not a busy CI machine), and one over TLS
    /// a 60 s `--connect-timeout` for its handshakes (default 10 s).
    static func bench(_ arguments: [String], server: ServerProcess) throws -> ChildProcess {
        var bounds: [String] = []
        if arguments.contains("--requests") && !arguments.contains("--time-limit") { bounds += ["--time-limit", "600s"] }
        if arguments.contains("--tls") && !arguments.contains("--connect-timeout") { bounds += ["--connect-timeout", "60s"] }
        return try ChildProcess(try ServerProcess.binary("larder"), ["bench", "--server", server.address] + bounds + arguments)
    }

    /// `--clean-up larder-bench-`: deletes whatever any run left; its report line.
    static func cleanUpAll(_ server: ServerProcess) async throws -> String {
        let run = try bench(["--clean-up", "larder-bench-"], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        return run.stdout
    }

    /// Calls still in flight when a run by duration ends are waited for (5 s) and measured; those
    /// that never come back (here creates held by another process's lock on the database) make
    /// the run fail with a reason, instead of vanishing from a report that said all was well.
    @Test func callsUnansweredAfterADurationRunAreReportedAndFailIt() async throws {
        let server = try await ServerProcess(arguments: ["--busy-timeout", "300", "--drain-timeout", "1"])
        defer { server.stop() }
        let lock = try SQLiteLock(path: server.databasePath)
        defer { lock.release() }
        // The run needs both a ping answered and a create sent (it picks each call at random): a
        // run on a busy machine that made too few calls for that proves nothing and is made
        // again, at most 3 runs. (With ping=90,create=10 and no retry, one failed in CI.)
        var run: ChildProcess
        var status: Int32?
        var attempts = 0
        repeat {
            attempts += 1
            run = try Self.bench(["--workload", "mix", "--mix", "ping=50,create=50", "--duration", "1s", "--warmup", "0s",
                                  "--concurrency", "8", "--keep-data", "--json"], server: server)
            status = await run.waitForExit()
        } while attempts < 3 && (status == 0 || run.stderr.contains("no call was answered during the run"))
        #expect(status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("calls had no reply within 5s after the run ended (a stalled or overloaded server?)"),
                "\(run.stderr)")
        #expect(run.stdout.contains("\"stopped_by\" : \"") || run.stdout.contains("\"stopped_by\":\""), "\(run.stdout)")
    }

    /// The data a run needs is created within the server's --max-calls-per-connection (the bench
    /// sent 100 creates at once, and a server with a lower limit could not be loaded at all).
    @Test func dataIsCreatedWithinALowCallsPerConnectionLimit() async throws {
        let server = try await ServerProcess(arguments: ["--max-calls-per-connection", "16"])
        defer { server.stop() }
        let run = try Self.bench(["--workload", "list", "--requests", "50", "--time-limit", "600s", "--warmup", "0s",
                                  "--concurrency", "4"], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        #expect(run.stderr.contains("created 500 meal records"), "\(run.stderr)")
        #expect(try await Self.cleanUpAll(server) == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }

    /// Over HTTP/2, calls beyond the server's stream limit wait in the client until streams
    /// free, as stock gRPC clients queue them (the bench opened 64 streams before the server's
    /// SETTINGS came, and a server allowing 16 refused 48).
    @Test func http2CallsBeyondTheServersStreamLimitWait() async throws {
        let server = try await ServerProcess(arguments: ["--max-calls-per-connection", "16"])
        defer { server.stop() }
        let run = try Self.bench(["--protocol", "grpc", "--workload", "ping", "--connections", "1", "--concurrency", "64",
                                  "--requests", "2000", "--time-limit", "600s", "--warmup", "0s"], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)\n\(run.stdout)")
        #expect(run.stdout.contains("2,000, 0 errors"), "\(run.stdout)")
        // The report says the calls above the limit waited in the bench (their latency holds the wait).
        #expect(run.stdout.contains("streams      the server allows 16 calls at once per connection: 48 of the 64 in flight "
                                    + "waited in the bench"), "\(run.stdout)")
    }

    /// Within the server's stream limit, the report has no such line.
    @Test func http2CallsWithinTheServersStreamLimitAreNotReportedAsWaiting() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let run = try Self.bench(["--protocol", "grpc", "--workload", "ping", "--connections", "1", "--concurrency", "8",
                                  "--requests", "200", "--time-limit", "600s", "--warmup", "0s", "--json"], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)\n\(run.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(json["server_stream_limit"] is NSNull, "\(run.stdout)")
        #expect(json["calls_above_stream_limit"] as? Int == 0, "\(run.stdout)")
    }

    /// An open-loop run whose calls all wait (creates held by another process's lock) reports the
    /// scheduled calls it never sent, exits 1, and has their waits in its latencies (left out, the
    /// percentiles of a stalled server looked like a healthy one's).
    @Test func anOpenLoopRunReportsTheCallsItNeverSent() async throws {
        let server = try await ServerProcess(arguments: ["--busy-timeout", "300", "--drain-timeout", "1"])
        defer { server.stop() }
        let lock = try SQLiteLock(path: server.databasePath)
        defer { lock.release() }
        let run = try Self.bench(["--workload", "create", "--rate", "1000", "--concurrency", "2", "--duration", "1s",
                                  "--warmup", "0s", "--keep-data", "--json"], server: server)
        #expect(await run.waitForExit() == 1, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let unsent = try #require(json["unsent_calls"] as? Int, "\(run.stdout)")
        #expect(unsent > 500 && unsent <= 1000, "\(unsent)")
        // More than half the schedule waited: the median wait is at least a millisecond (all but
        // the calls due in the window's last millisecond had waited longer).
        let latency = try #require(json["latency_us"] as? [String: Any], "\(run.stdout)")
        #expect(try #require(latency["p50"] as? Int) >= 1000, "\(latency)")
        #expect(try #require(latency["count"] as? Int) >= unsent, "\(latency)")
    }

    /// A server that stops mid-run (a drain closes every connection) ends the run early: that is
    /// reported as the reason it stopped short, with exit 1, not as a shorter run that went well.
    @Test func aRunTheServerCutsShortSaysSoAndFails() async throws {
        let server = try await ServerProcess(arguments: ["--drain-timeout", "5"])
        let run = try Self.bench(["--workload", "ping", "--duration", "600s", "--time-limit", "700s", "--warmup", "0s",
                                  "--json"], server: server)
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(60))
        #expect(try await eventually(seconds: 120) {
            try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).methods
                .contains { $0.method == HealthMethods.check.path && $0.totalCalls >= 100 }
        })
        client.close()
        server.stop()
        #expect(await run.waitForExit() == 1, "\(run.stderr)\n\(run.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
                                "\(run.stdout)")
        let reason = json["stopped_by"] as? String ?? ""
        #expect(reason.hasPrefix("every connection was closed after "), "\(reason)")
    }

    /// A --server-pid that names no process is refused before anything runs (it used to give a
    /// report without the server's CPU and no word why).
    @Test func aServerPIDOfNoProcessIsAUsageError() async throws {
        let run = try ChildProcess(try ServerProcess.binary("larder"),
                                   ["bench", "--server", "127.0.0.1:1", "--server-pid", "2147483646", "--duration", "1s"])
        #expect(await run.waitForExit() == 2, "\(run.stderr)")
        #expect(run.stderr.contains("--server-pid 2147483646: no such process"), "\(run.stderr)")
    }

    @Test func aRunDeletesWhatItCreatedAndWritesAnHTMLReport() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let report = server.directory.appendingPathComponent("report.html")
        let run = try Self.bench([
            "--workload", "mix", "--mix", "get=50,create=30,list=20", "--seed-locations", "40", "--seed-meals", "25",
            // A count and a generous cap, not 1 s: on a busy TSan run the 1 s run once exited 1 (no call
            // done in time, or calls still in flight past the default 5 s grace counted lost).
            "--requests", "200", "--time-limit", "600s", "--warmup", "0s", "--concurrency", "4",
            "--format", "html", "-o", report.path,
        ], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        let html = try String(contentsOf: report, encoding: .utf8)
        #expect(html.contains("<svg class=\"chart\" id=\"throughput-over-time\""))
        #expect(run.stderr.contains("data: deleted 40 locations and "), "\(run.stderr)")
        #expect(try await Self.cleanUpAll(server) == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }

    @Test("Ctrl-C (SIGINT) or SIGTERM stops the run and still deletes its data", arguments: [SIGINT, SIGTERM])
    func ctrlCStopsTheRunAndStillDeletes(signalNumber: Int32) async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let run = try Self.bench([
            // A duration no stall of a busy test run outlasts (the Ctrl-C below must land inside
            // the run: once a 500 ms sleep here took more than 120 s): the run never gets near it.
            "--workload", "mix", "--mix", "get=50,create=50", "--seed-locations", "200", "--duration", "1800s",
            "--time-limit", "1900s", "--concurrency", "4",
        ], server: server)
        #expect(await run.waitFor { run.stderr.contains("created 200 locations") }, "\(run.stderr)")
        try await Task.sleep(for: .milliseconds(500))
        run.signal(signalNumber)
        #expect(await run.waitForExit() == 128 + signalNumber, "\(run.stderr)")
        #expect(run.stderr.contains("; stopping and deleting"))
        #expect(run.stdout.contains("interrupted  by Ctrl-C or SIGTERM"), "\(run.stdout)")
        #expect(run.stdout.contains("data         deleted 200 locations and "), "\(run.stdout)")
        #expect(try await Self.cleanUpAll(server) == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }

    @Test func aSecondCtrlCQuitsAtOnceAndSaysHowToDeleteWhatIsLeft() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        // As many locations as one ListLocations reply holds comfortably (about 2 MB), so the
        // clean-up command below can find whatever is left however far the seeding got.
        let run = try Self.bench(["--workload", "get", "--seed-locations", "20000", "--duration", "1800s",
                                  "--time-limit", "1900s"], server: server)
        #expect(await run.waitFor { run.stderr.contains("creating 20000 locations") }, "\(run.stderr)")
        // Once some exist: a first Ctrl-C before any was committed leaves nothing to delete, and
        // the bench exits at once ("0 of 20000 done") with no second one to test.
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(60))
        defer { client.close() }
        #expect(try await eventually(seconds: 120) {
            try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations
                .contains { $0.name.hasPrefix("larder-bench-") }
        }, "\(run.stderr)")
        run.signal(SIGINT)
        #expect(await run.waitFor { run.stderr.contains("interrupted; stopping") || !run.isRunning }, "\(run.stderr)")
        run.signal(SIGINT)
        #expect(await run.waitForExit() == 130, "\(run.stderr)")
        // The second Ctrl-C quits at once, unless deleting had already finished: on a busy machine
        // the first one can arrive after the seeding, and the report (stdout) then says what was deleted.
        #expect(run.stderr.contains("interrupted twice; quitting") || run.stderr.contains("larder bench: deleted ")
                || run.stdout.contains("data         deleted "), "\(run.stderr)\n\(run.stdout)")
        if run.stderr.contains("without deleting") {
            #expect(run.stderr.contains("delete it with: larder bench --server \(server.address) --clean-up larder-bench-"))
        }
        // Whatever it left, the clean-up it names removes.
        _ = try await Self.cleanUpAll(server)
        #expect(try await Self.cleanUpAll(server) == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }

    @Test func keptDataIsNamedAndCleanUpDeletesIt() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let run = try Self.bench(["--workload", "create", "--requests", "60", "--warmup", "0s", "--keep-data", "--json"],
                                 server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let data = try #require(json["data"] as? [String: Any])
        let prefix = try #require(data["prefix"] as? String)
        #expect(data["kept"] as? Bool == true)
        #expect((data["clean_up_command"] as? String)?.hasSuffix("--clean-up \(prefix)") == true)
        let cleanUp = try Self.bench(["--clean-up", prefix], server: server)
        #expect(await cleanUp.waitForExit() == 0, "\(cleanUp.stderr)")
        let deleted = cleanUp.stdout.split(separator: " ")
        #expect(deleted.count > 5 && deleted[1] == "0" && (Int(deleted[4]) ?? 0) >= 60, "\(cleanUp.stdout)")
        #expect(try await Self.cleanUpAll(server) == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }

    @Test func callRunsAnyMethodWithTemplates() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let run = try Self.bench([
            "--call", "/larder.v1.LocationService/CreateLocation",
            "-d", ##"{"location": {"name": "{{.Prefix}}-{{.RequestNumber}}", "colorHex": "#A0B{{randomInt 100 999}}"}}"##,
            "--requests", "80", "--warmup", "0s", "--concurrency", "2", "--format", "csv",
        ], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        let total = run.stdout.split(separator: "\n").first { $0.hasPrefix("total,") } ?? ""
        #expect(total.split(separator: ",", omittingEmptySubsequences: false)[5] == "80", "\(run.stdout)")
        #expect(try await Self.cleanUpAll(server) == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }
}
