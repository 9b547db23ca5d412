import LarderAPI
import LarderCLI
import LarderWire
import Testing

/// `larder meals summary`: days in an IANA time zone (`--tz`, default the machine's) or at a fixed offset.
@Suite("meals summary time zones")
struct SummaryTimeZoneTests {
    static let reply = SummarizeMealRecordsResponse(
        days: [DailySummary(date: "2026-11-01", totalCalories: 700, mealCount: 1,
                            categories: [CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)])],
        totalCalories: 700, mealCount: 1,
        categories: [CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)])

    /// Runs the summary with `extra` arguments; returns what the server got and the output.
    func summarize(_ extra: [String]) async throws -> (request: SummarizeMealRecordsRequest?, run: CLIRun) {
        let server = try FakeServer()
        var sent: SummarizeMealRecordsRequest?
        let run = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02"] + extra,
                                          server: server) { requests in
            guard let request = await requests.next() else { return }
            sent = try ProtoCodec.decode(SummarizeMealRecordsRequest.self, from: request.payload)
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(Self.reply)))
        }
        return (sent, run)
    }

    @Test("--tz sends the zone name and no offset")
    func namedZone() async throws {
        let (request, run) = try await summarize(["--tz", "America/New_York"])
        #expect(run.status == 0)
        #expect(request?.timeZone == "America/New_York")
        #expect(request?.utcOffsetMinutes == 0)
        #expect(run.stdout.hasSuffix("Days are local dates in America/New_York.\n"))
    }

    @Test("without --tz or --utc-offset the machine's zone is sent by name")
    func machineZone() async throws {
        let (request, run) = try await summarize([])
        #expect(run.status == 0)
        #expect(request?.timeZone == "Asia/Taipei")  // CLIRunner's local zone
        #expect(request?.utcOffsetMinutes == 0)
    }

    @Test("--utc-offset keeps working and sends no zone")
    func fixedOffset() async throws {
        let (request, run) = try await summarize(["--utc-offset", "+05:30"])
        #expect(run.status == 0)
        #expect(request?.timeZone == "")
        #expect(request?.utcOffsetMinutes == 330)
        #expect(run.stdout.hasSuffix("Days are local dates at UTC+05:30.\n"))
    }

    @Test("--tz with --utc-offset is a usage error")
    func both() async throws {
        let run = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02",
                                           "--tz", "Asia/Taipei", "--utc-offset", "+08:00"], server: nil)
        #expect(run.status == 2)
        #expect(run.stderr.contains("give --tz or --utc-offset, not both"))
    }
}
