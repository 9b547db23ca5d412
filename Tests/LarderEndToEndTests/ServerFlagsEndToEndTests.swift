import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// `larder-server` refuses a bad flag before it opens anything: exit status 2, the flag
/// named, and a pointer to --help.
@Suite("Server flags", .offThePool)
struct ServerFlagsEndToEndTests {
    @Test(arguments: ["--auth-token-file", "--tls-cert", "--tls-key", "--tls-client-ca", "--db"])
    func anEmptyPathIsAUsageError(flag: String) async throws {
        let (status, log) = try await ServerProcess.runToExit([flag, ""])
        #expect(status == 2, "\(log)")
        #expect(log.contains("\(flag): expected a path") && log.contains("--help"), "\(log)")
    }

    /// Flags that mean nothing without another are refused, not ignored: a server started with
    /// `--tls-client-auth require` and no CA served clients without certificates.
    @Test(arguments: [(["--tls-client-auth", "require", "--tls-cert", "c.pem", "--tls-key", "k.pem"],
                       "--tls-client-auth require needs --tls-client-ca FILE"),
                      (["--tls-only"], "--tls-only and --tls-client-ca need TLS")])
    func aFlagWithoutTheOneItNeedsIsAUsageError(arguments: [String], message: String) async throws {
        let (status, log) = try await ServerProcess.runToExit(arguments)
        #expect(status == 2, "\(log)")
        #expect(log.contains(message), "\(log)")
    }

    /// A token file that is not one RFC 6750 token (here 32 bytes of 0xFF, which used to
    /// become U+FFFD) stops the server at start, naming the file and what a token may hold.
    @Test func aTokenFileThatIsNotATokenStopsTheServer() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token").path
        try Data(repeating: 0xFF, count: 32).write(to: URL(fileURLWithPath: tokenFile))
        // A port already taken: were the token accepted, the server would stop at listening
        // (with another message), never serve.
        let (taken, port) = try boundLoopbackSocket(listening: 1)
        defer { close(taken) }
        let (status, log) = try await ServerProcess.runToExit(["--auth-token-file", tokenFile, "--listen", "127.0.0.1:\(port)",
                                                                "--db", directory.appendingPathComponent("db").path])
        #expect(status == 1, "\(log)")
        #expect(log.contains("event=start_failed"), "\(log)")
        #expect(log.contains("auth token file \(tokenFile) has byte 0xFF at offset 0: each line holds one bearer "
                             + "token of A-Z a-z 0-9 - . _ ~ + / (then = padding)"), "\(log)")
        #expect(!log.contains("event=listening"))
        // Refused before the database was opened: no file made and seeded for nothing (audit 27 L14).
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db").path))
        #expect(!log.contains("event=database_opened"), "\(log)")
    }

    /// A port another process listens on, for RPCs or for metrics, stops the server before it
    /// opens the database: no new database is created and seeded (nor an old one migrated) for
    /// a server that never serves (audit 35 M2).
    @Test(arguments: ["--listen", "--metrics-listen"])
    func aBusyPortStopsTheServerBeforeTheDatabaseIsOpened(flag: String) async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-busy-port")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (taken, port) = try boundLoopbackSocket(listening: 1)
        defer { close(taken) }
        var arguments = ["--db", directory.appendingPathComponent("db").path, "--listen", "127.0.0.1:0"]
        arguments += [flag, "127.0.0.1:\(port)"]
        let (status, log) = try await ServerProcess.runToExit(arguments)
        #expect(status == 1, "\(log)")
        let what = flag == "--listen" ? "cannot listen on 127.0.0.1:\(port)" : "cannot listen for metrics on 127.0.0.1:\(port)"
        #expect(log.contains("event=start_failed") && log.contains(what) && log.contains("Address already in use"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db").path))
        #expect(!log.contains("event=database_opened"), "\(log)")
    }

    /// One port for both endpoints is refused before anything is opened (binding both would
    /// succeed, and only listening on the second fail, after the database was made).
    @Test func oneTcpPortForRPCsAndMetricsIsAUsageError() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-same-port")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, log) = try await ServerProcess.runToExit(["--db", directory.appendingPathComponent("db").path,
                                                                "--listen", "127.0.0.1:17999", "--metrics-listen", "127.0.0.1:17999"])
        #expect(status == 2, "\(log)")
        #expect(log.contains("--metrics-listen 127.0.0.1:17999 and --listen 127.0.0.1:17999 take the same port"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db").path))
    }

    /// The harness's bound: a server that starts serving where a test expected a refusal is
    /// killed after the bound rather than hanging the suite (status SIGKILL's 9, whenever it
    /// got to start).
    @Test func runToExitStopsAServerThatServes() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-serving")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, _) = try await ServerProcess.runToExit(
            ["--listen", "127.0.0.1:0", "--db", directory.appendingPathComponent("db").path], seconds: 2)
        #expect(status == SIGKILL)
    }

    @Test func aBadValueNamesTheFlagAndWhatItExpects() async throws {
        let (status, log) = try await ServerProcess.runToExit(["--durability", "sometimes"])
        #expect(status == 2)
        #expect(log.contains("--durability: expected full or normal, got \"sometimes\""), "\(log)")

        let (unknownStatus, unknownLog) = try await ServerProcess.runToExit(["--no-such-flag"])
        #expect(unknownStatus == 2)
        #expect(unknownLog.contains("--no-such-flag") && unknownLog.contains("--help"), "\(unknownLog)")
    }

    /// A bad address says what is wrong with it (review 31 M5), and a host name is refused as
    /// one, not taken for a non-loopback address that needs a token and TLS.
    @Test(arguments: [
        ("--listen", "127.0.0.1:99999", "has an invalid port \"99999\" (0-65535)"),
        ("--listen", "127.0.0.1", "has no port"),
        ("--listen", "::1:7411", "has an IPv6 address without brackets"),
        ("--listen", "example.com:7411", "has the host name \"example.com\": listening needs an IP address"),
        ("--metrics-listen", "http://127.0.0.1:9411", "is a URL"),
    ])
    func aBadAddressSaysWhatIsWrongWithIt(flag: String, value: String, reason: String) async throws {
        let (status, log) = try await ServerProcess.runToExit([flag, value])
        #expect(status == 2, "\(log)")
        #expect(log.contains("\(flag): \"\(value)\" \(reason)") && log.contains("expected HOST:PORT"), "\(log)")
    }

    /// Over 256 MiB a frame's length prefix could begin with 0x16 (0x16000000 is 352 MiB), and
    /// a server with TLS would take that lean frame for a ClientHello: refused, by flag and by
    /// environment variable alike.
    @Test(arguments: [(["--max-frame-bytes", "268435457"], [:]), (["--max-frame-bytes", "1073741824"], [:]),
                      ([], ["LARDER_MAX_FRAME_BYTES": "369098752"])] as [([String], [String: String])])
    func aFrameLimitOver256MiBIsAUsageError(arguments: [String], environment: [String: String]) async throws {
        // Were the limit taken, the server would stop at the database (exit 1), never serve.
        let (status, log) = try await ServerProcess.runToExit(
            arguments + ["--listen", "127.0.0.1:0", "--db", "/nonexistent-larder-dir/larder.sqlite"],
            environment: environment)
        #expect(status == 2, "\(log)")
        let source = environment.isEmpty ? "--max-frame-bytes" : "LARDER_MAX_FRAME_BYTES"
        #expect(log.contains("\(source): at most 268435456 (256 MiB), got ") && log.contains("0x16")
                    && log.contains("--help"), "\(log)")
    }

    /// A bad value from the environment names the variable the user set, not the flag they did not type.
    @Test func aBadValueFromTheEnvironmentNamesTheVariable() async throws {
        let (status, log) = try await ServerProcess.runToExit([], environment: ["LARDER_READERS": "abc"])
        #expect(status == 2, "\(log)")
        #expect(log.contains("LARDER_READERS: expected a whole number in ") && log.contains("got \"abc\""), "\(log)")
        #expect(!log.contains("--readers:"), "\(log)")
    }

    /// Metrics have no auth: a non-loopback `--metrics-listen` is refused before anything binds
    /// (192.0.2.1 is TEST-NET-1, on no interface here: even a regression could not listen on it).
    @Test func aNonLoopbackMetricsAddressNeedsInsecure() async throws {
        let (status, log) = try await ServerProcess.runToExit(
            ["--listen", "127.0.0.1:0", "--metrics-listen", "192.0.2.1:9000"])
        #expect(status == 2, "\(log)")
        #expect(log.contains("refusing to serve metrics (no auth) on non-loopback address 192.0.2.1:9000; "
            + "pass --insecure to do it anyway"), "\(log)")
    }

    /// The command line wins: a flag given there is not read from the environment, bad or not. (The
    /// server then fails on its database, a directory that does not exist: past the parsing.)
    @Test func aFlagOverridesABadVariableOfItsOwn() async throws {
        let (status, log) = try await ServerProcess.runToExit(
            ["--readers", "3", "--listen", "127.0.0.1:0", "--db", "/nonexistent-larder-dir/x.sqlite"],
            environment: ["LARDER_READERS": "abc"])
        #expect(status == 1, "\(log)")
        #expect(!log.contains("LARDER_READERS") && log.contains("event=database_open_failed"), "\(log)")
    }

    /// The listening lines are how a supervisor learns the port 0 picked: written at every level,
    /// while the level still holds back every other info line.
    @Test func theListeningLinesAreWrittenAtEveryLogLevel() async throws {
        let server = try await ServerProcess(arguments: ["--log-level", "error", "--metrics-listen", "127.0.0.1:0"])
        defer { server.stop() }
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(30))
        defer { client.close() }
        _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        #expect(await server.waitForLog("event=metrics_listening"), "\(server.stderr)")
        let infoLines = server.stderr.split(separator: "\n").filter { $0.contains("level=info") }
        #expect(infoLines.count == 2, "\(server.stderr)")
        #expect(infoLines.contains { $0.contains("event=listening address=127.0.0.1:\(server.port)") }, "\(server.stderr)")
        #expect(infoLines.contains { $0.contains("event=metrics_listening address=127.0.0.1:") }, "\(server.stderr)")
    }

    @Test func aFrameLimitOf256MiBIsServed() async throws {
        let server = try await ServerProcess(arguments: ["--max-frame-bytes", "268435456"])
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        var header: [UInt8] = []
        Frame.appendHeader(length: try #require(FrameLength(exactly: 268_435_457)), to: &header)
        raw.send(header)
        let reply = try #require(raw.receive())
        #expect(reply.callID == 0 && reply.statusCode == .resourceExhausted)
        #expect(reply.statusMessage == "frame length 268435457 exceeds the maximum of 268435456 bytes")
    }
}
