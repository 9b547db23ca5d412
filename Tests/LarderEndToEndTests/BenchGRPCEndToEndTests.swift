import Foundation
import LarderTestSupport
import Testing

/// `larder bench --protocol grpc` against a real server: every workload over HTTP/2, and errors
/// counted by grpc-status.
extension BenchEndToEndTests {
    /// Runs `larder bench --protocol grpc --json` with `arguments`; its exit status and JSON report.
    static func grpcBench(_ arguments: [String], server: ServerProcess) async throws -> (Int32?, [String: Any], String) {
        let run = try bench(["--protocol", "grpc", "--json", "--warmup", "0s"] + arguments, server: server)
        let status = await run.waitForExit()
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] ?? [:]
        return (status, json, run.stderr)
    }

    @Test func everyWorkloadRunsOverGRPCWithoutErrors() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-bench-grpc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("bench-token", in: directory)
        let server = try await ServerProcess(arguments: ["--auth-token-file", tokenFile])
        defer { server.stop() }
        let common = ["--token", "bench-token", "--requests", "300", "--concurrency", "16", "--connections", "2",
                      "--seed-locations", "30", "--seed-meals", "20"]
        let runs: [(String, [String])] = [
            ("ping", ["--workload", "ping"]), ("get", ["--workload", "get"]), ("create", ["--workload", "create"]),
            ("list", ["--workload", "list"]), ("mix", ["--workload", "mix"]),
            ("call", ["--call", "/larder.v1.LocationService/CreateLocation",
                      "-d", ##"{"location": {"name": "{{.Prefix}}-{{.RequestNumber}}", "colorHex": "#00AA00"}}"##]),
        ]
        for (name, arguments) in runs {
            let (status, json, stderr) = try await Self.grpcBench(common + arguments, server: server)
            #expect(status == 0, "\(name): \(stderr)")
            #expect(json["protocol"] as? String == "grpc", "\(name)")
            #expect(json["calls"] as? Int == 300, "\(name): \(json)")
            #expect(json["errors"] as? Int == 0 && json["lost_calls"] as? Int == 0, "\(name): \(json)")
            #expect((json["connection_failures"] as? [String])?.isEmpty == true, "\(name): \(json)")
        }
        // What the runs created (the create workload's ids came back over HTTP/2) is gone.
        let cleanUp = try Self.bench(["--token", "bench-token", "--clean-up", "larder-bench-"], server: server)
        #expect(await cleanUp.waitForExit() == 0, "\(cleanUp.stderr)")
        #expect(cleanUp.stdout == "deleted 0 locations and 0 meal records named larder-bench-…\n")
    }

    @Test func grpcErrorsAreCountedByStatus() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-bench-grpc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("bench-token", in: directory)
        let server = try await ServerProcess(arguments: ["--auth-token-file", tokenFile])
        defer { server.stop() }
        let (status, json, stderr) = try await Self.grpcBench([
            "--token", "wrong-token", "--call", "/larder.v1.LocationService/ListLocations", "--requests", "50",
            "--concurrency", "4",
        ], server: server)
        #expect(status == 1, "\(stderr)")
        #expect(json["calls"] as? Int == 50 && json["errors"] as? Int == 50, "\(json)")
        #expect(json["errors_by_code"] as? [String: Int] == ["UNAUTHENTICATED": 50], "\(json)")
        let message = (json["first_error_messages"] as? [String: String])?["UNAUTHENTICATED"] ?? ""
        #expect(!message.isEmpty, "\(json)")
        #expect(json["lost_calls"] as? Int == 0, "\(json)")
    }
}
