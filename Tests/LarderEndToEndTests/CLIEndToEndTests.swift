import Foundation
import LarderAPI
import LarderClient
import Testing
import LarderTestSupport

/// The `larder` binary against a real server.
@Suite("larder CLI over TCP", .offThePool)
struct CLIEndToEndTests {
    static func larder(_ arguments: [String], server: ServerProcess?) async throws -> CLIRun {
        var environment = ProcessInfo.processInfo.environment
        environment["LARDER_SERVER"] = server?.address ?? "127.0.0.1:1"
        environment["TZ"] = "UTC"
        environment["LARDER_TIMEOUT"] = cliTestTimeout
        return try await runBinary("larder", arguments, environment: environment)
    }

    /// A token about to go to a remote host without TLS is warned about before the connect
    /// (audit 20 F4); to loopback, or with --tls, it is not. 192.0.2.1 (TEST-NET-1) never answers.
    @Test func aTokenInClearTextToARemoteHostIsWarnedAbout() async throws {
        let remote = try await Self.larder(["--server", "192.0.2.1:7411", "--token", "s3cret", "--timeout", "1", "health"],
                                           server: nil)
        #expect(remote.status != 0)
        #expect(remote.stderr.hasPrefix("warning: the token goes to 192.0.2.1:7411 in clear text (no --tls)"),
                "\(remote.stderr)")
        #expect(!remote.stderr.contains("s3cret"))
        let local = try await Self.larder(["--token", "s3cret", "--timeout", "1", "health"], server: nil)
        #expect(!local.stderr.contains("warning"), "\(local.stderr)")
        let bench = try await Self.larder(["--server", "192.0.2.1:7411", "--token", "s3cret", "bench", "--requests", "10"],
                                          server: nil)
        #expect(bench.status != 0)
        #expect(bench.stderr.hasPrefix("warning: the token goes to 192.0.2.1:7411 in clear text (no --tls)"),
                "\(bench.stderr)")
    }

    @Test func addListAndErrorsThroughTheBinary() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let added = try await Self.larder(["--json", "locations", "add", "--name", "玄關", "--color", "#aabbcc"], server: server)
        #expect(added.status == 0, "\(added.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: Any])
        #expect(json["name"] as? String == "玄關" && json["colorHex"] as? String == "#AABBCC")
        let id = try #require(json["id"] as? String)

        let table = try await Self.larder(["locations", "list"], server: server)
        #expect(table.status == 0)
        let rows = table.stdout.split(separator: "\n")
        #expect(rows.count == 6, "header + 5 locations:\n\(table.stdout)")
        #expect(rows.contains { $0.contains(id) && $0.contains("玄關") && $0.contains("#AABBCC") })

        let duplicate = try await Self.larder(["locations", "add", "--name", "玄關", "--color", "#000000"], server: server)
        #expect(duplicate.status == 16)
        #expect(duplicate.stderr.contains("ALREADY_EXISTS: location name \"玄關\" already exists"))

        let missing = try await Self.larder(["meals", "get", "00000000-0000-4000-8000-000000000000"], server: server)
        #expect(missing.status == 15 && missing.stderr.hasPrefix("NOT_FOUND: "))

        let meal = try await Self.larder(["--json", "meals", "add", "--name", "Oatmeal", "--calories", "350",
                                    "--category", "breakfast", "--at", "2026-11-30T08:00:00+08:00"], server: server)
        #expect(meal.status == 0, "\(meal.stderr)")
        #expect(meal.stdout.contains("\"eatenAt\": \"2026-11-30T00:00:00Z\""))
        let summary = try await Self.larder(["--json", "meals", "summary", "--since", "2026-11-30T00:00:00+08:00",
                                       "--until", "2026-12-01T00:00:00+08:00", "--utc-offset", "+08:00"], server: server)
        #expect(summary.status == 0, "\(summary.stderr)")
        #expect(summary.stdout.contains("\"totalCalories\": \"350\""))
    }

    /// The CLI asks for 1,000 locations a page and follows the tokens, for lists and for names.
    @Test func listsAndNamesReachPastTheFirstPage() async throws {
        try await withServer { server, client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for batch in 0..<10 {
                    group.addTask {
                        for index in batch * 110..<(batch + 1) * 110 {
                            _ = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                                location: Location(name: "shelf \(index)", colorHex: "#102030")))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let ids = try await Self.larder(["-o", "ids", "locations", "list"], server: server)
            #expect(ids.status == 0, "\(ids.stderr)")
            let listed = ids.stdout.split(separator: "\n")
            #expect(listed.count == 1_104 && Set(listed).count == 1_104, "1,100 and the 4 seeded, each once")
            // "shelf 999" sorts last of the shelves, on the second page.
            let last = try await Self.larder(["--json", "locations", "get", "shelf 999"], server: server)
            #expect(last.status == 0 && last.stdout.contains("\"name\": \"shelf 999\""), "\(last.stderr)")
        }
    }

    @Test func unreachableServerIsUnavailableWithTheAddress() async throws {
        let outcome = try await Self.larder(["locations", "list"], server: nil)
        #expect(outcome.status == 24)
        #expect(outcome.stderr.hasPrefix("UNAVAILABLE: cannot connect to 127.0.0.1:1"))
        #expect(!outcome.stderr.contains("Fatal error"))
    }
}
