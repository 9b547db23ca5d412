import Testing

/// `larder-server` refuses a bad flag before it opens anything: exit status 2, the flag
/// named, and a pointer to --help.
@Suite("Server flags")
struct ServerFlagsEndToEndTests {
    @Test(arguments: ["--auth-token-file", "--tls-cert", "--tls-key", "--tls-client-ca", "--db"])
    func anEmptyPathIsAUsageError(flag: String) async throws {
        let (status, log) = try await ServerProcess.runToExit([flag, ""])
        #expect(status == 2, "\(log)")
        #expect(log.contains("\(flag): expected a path") && log.contains("--help"), "\(log)")
    }

    @Test func aBadValueNamesTheFlagAndWhatItExpects() async throws {
        let (status, log) = try await ServerProcess.runToExit(["--durability", "sometimes"])
        #expect(status == 2)
        #expect(log.contains("--durability: expected full or normal, got \"sometimes\""), "\(log)")

        let (unknownStatus, unknownLog) = try await ServerProcess.runToExit(["--no-such-flag"])
        #expect(unknownStatus == 2)
        #expect(unknownLog.contains("--no-such-flag") && unknownLog.contains("--help"), "\(unknownLog)")
    }
}
