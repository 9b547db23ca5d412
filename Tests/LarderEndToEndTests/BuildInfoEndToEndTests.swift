import Foundation
import LarderAPI
import LarderCLI
import LarderClient
import LarderJSON
import LarderWire
import Testing
import LarderTestSupport

@Suite("Version and build info: --version, larder version, Admin/GetServerInfo, the starting log line", .offThePool)
struct BuildInfoEndToEndTests {
    /// The commit the build recorded is the one the build scripts passed (scripts/test.sh
    /// exports LARDER_COMMIT for the build and the tests alike), and every binary reports it.
    @Test func bothBinariesReportTheVersionCommitAndProtocolOfTheBuild() async throws {
        if let exported = ProcessInfo.processInfo.environment["LARDER_COMMIT"], !exported.isEmpty {
            #expect(BuildInfo.commit == exported, "the build recorded another commit than LARDER_COMMIT")
        }
        #expect(!BuildInfo.commit.isEmpty && BuildInfo.protocolVersion == "larder.rpc.v1")
        #expect(BuildInfo.version.split(separator: ".").count == 3)

        let server = try await runBinary("larder-server", ["--version"])
        #expect(server.status == 0 && server.stdout == "larder-server \(BuildInfo.summary)\n", "\(server)")
        let client = try await runBinary("larder", ["--version"])
        #expect(client.status == 0 && client.stdout == "larder \(BuildInfo.summary)\n", "\(client)")
        // Anywhere on the line, like --help, and without contacting a server.
        let late = try await runBinary("larder", ["--server", "127.0.0.1:1", "meals", "list", "--version"])
        #expect(late.status == 0 && late.stdout == client.stdout, "\(late)")
        #expect(BuildInfo.summary == "\(BuildInfo.version) (commit \(BuildInfo.commit), protocol larder.rpc.v1)")
        #expect(try await runBinary("larder-server", ["--help"]).stdout.contains("SIGHUP"))
    }

    @Test func serverReportsItsBuildOverTheProtocolAndInItsFirstLogLine() async throws {
        let before = Int64(Date().timeIntervalSince1970) - 1
        try await withServer { server, client in
            let info = try await client.call(AdminMethods.getServerInfo, GetServerInfoRequest())
            #expect(info.version == BuildInfo.version && info.commit == BuildInfo.commit)
            #expect(info.protocolVersion == BuildInfo.protocolVersion)
            let started = try #require(info.startTime)
            #expect(started.seconds >= before && started.seconds <= Int64(Date().timeIntervalSince1970) + 1)
            #expect(try await client.call(AdminMethods.getMetrics, GetMetricsRequest()).startTime == info.startTime)

            let first = try #require(server.stderr.split(separator: "\n").first)
            #expect(first.contains(#/ level=info event=starting version=\S+ commit=\S+ protocol=larder\.rpc\.v1 pid=\d+$/#))
            #expect(first.contains(" version=\(BuildInfo.version) commit=\(BuildInfo.commit) "))
            #expect(first.contains(" pid=\(server.processIdentifier)"))
        }
    }

    @Test func versionCommandPrintsClientAndServerLikeKubectl() async throws {
        try await withServer { server, _ in
            let text = try await runLarder(["version"], server: server)
            #expect(text.status == 0, "\(text.stderr)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(text.stdout)")
            #expect(lines.first == "Client Version: \(BuildInfo.summary)")
            #expect(lines.dropFirst().first == "Server Version: \(BuildInfo.summary)")
            #expect(lines.last?.hasPrefix("Server Started: ") == true)

            let json = try await runLarder(["--json", "version"], server: server)
            #expect(json.status == 0, "\(json.stderr)")
            let document = try JSONParser.parse(json.stdout)
            for side in ["clientVersion", "serverVersion"] {
                #expect(document[side]?["version"] == .string(BuildInfo.version), "\(side)")
                #expect(document[side]?["commit"] == .string(BuildInfo.commit), "\(side)")
                #expect(document[side]?["protocolVersion"] == .string(BuildInfo.protocolVersion), "\(side)")
            }
            #expect(document["serverVersion"]?["startTime"]?.stringValue != nil)
            #expect(document["clientVersion"]?["startTime"] == nil)

            let clientOnly = try await runLarder(["version", "--client"], server: server)
            #expect(clientOnly.status == 0 && clientOnly.stdout == "Client Version: \(BuildInfo.summary)\n")
        }
    }

    /// With no server to ask, the client's version still prints, then the error and its exit status.
    @Test func versionCommandWithoutAServerPrintsTheClientAndFails() async throws {
        let closed = try await runBinary("larder", ["--server", "127.0.0.1:1", "--timeout", "5", "version"])
        #expect(closed.status == ExitCode.forStatus(.unavailable), "\(closed)")
        #expect(closed.stdout == "Client Version: \(BuildInfo.summary)\n")
        #expect(closed.stderr.contains("UNAVAILABLE"))
        let clientOnly = try await runBinary("larder", ["--server", "127.0.0.1:1", "version", "--client"])
        #expect(clientOnly.status == 0 && clientOnly.stdout == "Client Version: \(BuildInfo.summary)\n")
    }
}

/// Runs one of the built binaries with no server of the tests' and no LARDER_* settings.
func runBinary(_ name: String, _ arguments: [String]) async throws -> CLIRun {
    try await runBinary(name, arguments, environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LARDER_") })
}
