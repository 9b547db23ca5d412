import Foundation
import LarderTestSupport
import Testing

/// scripts/start.sh with the debug binaries (LARDER_START_BIN, no install or build):
/// it checks the address the server really listens on, refuses a taken one, and
/// never leaves its server running.
@Suite("scripts/start.sh", .offThePool)
struct StartScriptEndToEndTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(URL(fileURLWithPath: "/bin/bash"), ["scripts/start.sh"] + arguments,
                         environment: ["LARDER_START_BIN": ServerProcess.binDirectory.path].merging(environment) { $1 },
                         currentDirectory: repository)
    }

    /// The pid of the server start.sh started, from its "larder-server pid N" line.
    static func serverPID(_ run: ChildProcess) -> Int32? {
        guard let line = run.stderr.split(separator: "\n").first(where: { $0.hasPrefix("start: larder-server pid ") }) else {
            return nil
        }
        return Int32(line.split(separator: " ").last ?? "")
    }

    @Test func aTakenPortFailsClearlyAndShowsNothingOfTheOtherServer() async throws {
        let other = try await ServerProcess()
        defer { other.stop() }
        let scratch = other.directory.appendingPathComponent("mine.sqlite").path
        for environment in [[:], ["LARDER_LISTEN": other.address]] {
            let arguments = environment.isEmpty ? ["--listen", other.address, "--db", scratch] : ["--db", scratch]
            let run = try Self.start(arguments, environment: environment)
            #expect(await run.waitForExit() == 1, "\(run.stderr)")
            #expect(run.stderr.contains("\(other.address) is already taken"), "\(run.stderr)")
            #expect(!run.stdout.contains("running"), "\(run.stdout)")
            #expect(!run.stdout.contains("SERVING"))
            if let pid = Self.serverPID(run) { #expect(!processIsAlive(pid)) }
        }
    }

    @Test func aServerThatCannotStartIsReportedAndNotLeftBehind() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-start")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Self.start(["--listen", "127.0.0.1:0", "--db", directory.appendingPathComponent("x.sqlite").path,
                                  "--no-such-flag"])
        #expect(await run.waitForExit() == 1, "\(run.stderr)")
        #expect(run.stderr.contains("exited (status 2) before listening on 127.0.0.1:0"), "\(run.stderr)")
        let pid = try #require(Self.serverPID(run))
        #expect(!processIsAlive(pid))
    }

    @Test func itChecksTheAddressTheServerListensOnAndStopsItOnTERM() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-start")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Port 0 through LARDER_LISTEN: only the server's own log can say where it listens.
        let run = try Self.start(["--db", directory.appendingPathComponent("x.sqlite").path],
                                 environment: ["LARDER_LISTEN": "127.0.0.1:0"])
        #expect(await run.waitFor { run.stdout.contains("larder-server is running on 127.0.0.1:") }, "\(run.stderr)")
        #expect(run.stdout.contains("SERVING"))
        #expect(!run.stdout.contains("127.0.0.1:0 "))
        let pid = try #require(Self.serverPID(run))
        #expect(processIsAlive(pid))
        run.signal(SIGTERM)
        #expect(await run.waitForExit() == 143, "\(run.stderr)")
        #expect(!processIsAlive(pid))
    }
}
