import LarderAPI
import LarderCLI
import LarderJSON
import LarderWire
import Testing

@Suite("--version and larder version")
struct VersionCommandTests {
    let parser = ArgumentParser(catalog: .larder)

    @Test func versionFlagIsGlobalLikeHelp() throws {
        for arguments in [["--version"], ["meals", "list", "--version"], ["--server", "127.0.0.1:1", "--version"]] {
            guard case .version = try parser.parse(arguments) else {
                Issue.record("\(arguments) is not a version request")
                continue
            }
        }
        guard case .help = try parser.parse(["--version", "--help"]) else {
            Issue.record("--help wins over --version")
            return
        }
        // After `--` it is an argument like any other.
        guard case .run(let command, _) = try parser.parse(["call", "/a.B/C", "--", "--version"]) else {
            Issue.record("call with -- --version did not parse as a command")
            return
        }
        #expect(command.positionals == ["/a.B/C", "--version"])
    }

    @Test func versionFlagPrintsTheBuildWithoutAServer() async throws {
        let run = try await CLIRunner.run(["--version"], server: nil)
        #expect(run.status == 0 && run.stderr.isEmpty)
        #expect(run.stdout == "larder \(BuildInfo.version) (commit \(BuildInfo.commit), protocol \(BuildInfo.protocolVersion))\n")
    }

    @Test func versionCommandShowsClientThenServer() async throws {
        let server = ServerInfo(version: "9.8.7", commit: "0123456789ab-dirty", protocolVersion: "larder.rpc.v1",
                                startTime: Timestamp(seconds: 1_796_000_000))
        let text = try await CLIRunner.run(["version"], replying: server)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout == """
            Client Version: \(BuildInfo.summary)
            Server Version: 9.8.7 (commit 0123456789ab-dirty, protocol larder.rpc.v1)
            Server Started: 2026-11-30T08:53:20+08:00

            """)
        let json = try await CLIRunner.run(["--json", "version"], replying: server)
        let document = try JSONParser.parse(json.stdout)
        #expect(document["serverVersion"]?["version"] == .string("9.8.7"))
        #expect(document["serverVersion"]?["commit"] == .string("0123456789ab-dirty"))
        #expect(document["clientVersion"]?["version"] == .string(BuildInfo.version))
        #expect(document["clientVersion"]?["protocolVersion"] == .string("larder.rpc.v1"))
    }

    @Test func catalogListsTheVersionCommandAndTheGlobalFlag() throws {
        let spec = try #require(CommandCatalog.larder.command(named: "version"))
        #expect(spec.option(named: "client") != nil)
        let help = Usage.top(.larder)
        #expect(help.contains("version") && help.contains("--version"))
    }
}
