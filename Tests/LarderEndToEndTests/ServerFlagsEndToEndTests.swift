import LarderAPI
import LarderClient
import LarderTestSupport
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

        let (delayStatus, delayLog) = try await ServerProcess.runToExit(["--commit-delay", "100001"])
        #expect(delayStatus == 2)
        #expect(delayLog.contains("--commit-delay: expected a whole number in 0...100000, got \"100001\""), "\(delayLog)")

        let (unknownStatus, unknownLog) = try await ServerProcess.runToExit(["--no-such-flag"])
        #expect(unknownStatus == 2)
        #expect(unknownLog.contains("--no-such-flag") && unknownLog.contains("--help"), "\(unknownLog)")
    }

    /// The commit delay in effect is logged: by default it follows --durability, and the flag
    /// overrides it; writes sent together and a lone write are all answered with the longest.
    @Test(arguments: [([], "0"), (["--durability", "normal"], "200"),
                      (["--durability", "normal", "--commit-delay", "100000"], "100000")])
    func theCommitDelayFollowsDurabilityUnlessSet(arguments: [String], expected: String) async throws {
        let server = try await ServerProcess(arguments: arguments)
        defer { server.stop() }
        #expect(server.stderr.contains("event=database_opened") && server.stderr.contains("commit_delay_us=\(expected)\n"),
                "\(server.stderr)")
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(60))
        defer { client.close() }
        let names = (0..<16).map { "meal \($0)" }
        let created = try await withThrowingTaskGroup(of: String.self) { group in
            for name in names {
                group.addTask {
                    try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                        mealRecord: MealRecord(name: name, calories: 100, category: .lunch))).name
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(created == Set(names))
        let alone = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
            mealRecord: MealRecord(name: "alone", calories: 1, category: .snack)))
        let listed = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(pageSize: 100))
        #expect(Set(listed.mealRecords.map(\.name)) == Set(names + [alone.name]))
    }
}
