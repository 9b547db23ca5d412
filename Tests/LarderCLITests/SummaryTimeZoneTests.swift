import Foundation
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
    func summarize(_ extra: [String], localTime: LocalTime = CLIRunner.taipei) async throws
        -> (request: SummarizeMealRecordsRequest?, run: CLIRun)
    {
        let server = try FakeServer()
        var sent: SummarizeMealRecordsRequest?
        let run = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02"] + extra,
                                          server: server, localTime: localTime) { requests in
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

    @Test("a machine zone named without a slash (CET, EST5EDT) is sent by name; a bare GMT offset as an offset",
          arguments: ["CET", "EST5EDT"])
    func machineZoneWithoutSlash(name: String) async throws {
        let zone = try #require(TimeZone(identifier: name))
        let (request, run) = try await summarize([], localTime: LocalTime(timeZone: zone))
        #expect(run.status == 0)
        #expect(request?.timeZone == name, "today's offset would put summer days on the wrong date")
        #expect(request?.utcOffsetMinutes == 0)
    }

    @Test("a machine zone Foundation knows only as an offset is sent as that offset")
    func machineZoneAsOffset() async throws {
        let zone = try #require(TimeZone(secondsFromGMT: 8 * 3600))
        let (request, run) = try await summarize([], localTime: LocalTime(timeZone: zone))
        #expect(run.status == 0)
        #expect(request?.timeZone == "")
        #expect(request?.utcOffsetMinutes == 480)
    }

    @Test("--utc-offset keeps working and sends no zone")
    func fixedOffset() async throws {
        let (request, run) = try await summarize(["--utc-offset", "+05:30"])
        #expect(run.status == 0)
        #expect(request?.timeZone == "")
        #expect(request?.utcOffsetMinutes == 330)
        #expect(run.stdout.hasSuffix("Days are local dates at UTC+05:30.\n"))
    }

    @Test("date-only --since/--until are midnights in the zone of --tz or --utc-offset, not the machine's")
    func dateBoundsInTheSummaryZone() async throws {
        // CLIRunner's machine zone is Asia/Taipei (+08:00); New York is -04:00 on 2026-11-01, -05:00 on 11-02.
        let (named, namedRun) = try await summarize(["--tz", "America/New_York"])
        #expect(namedRun.status == 0, "\(namedRun.stderr)")
        #expect(named?.startTime == Timestamp(seconds: 1_793_505_600))  // 2026-11-01T04:00:00Z
        #expect(named?.endTime == Timestamp(seconds: 1_793_595_600))  // 2026-11-02T05:00:00Z
        let (fixed, fixedRun) = try await summarize(["--utc-offset", "+05:30"])
        #expect(fixedRun.status == 0, "\(fixedRun.stderr)")
        #expect(fixed?.startTime == Timestamp(seconds: 1_793_471_400))  // 2026-10-31T18:30:00Z
        #expect(fixed?.endTime == Timestamp(seconds: 1_793_557_800))  // 2026-11-01T18:30:00Z
        let (machine, _) = try await summarize([])
        #expect(machine?.startTime == Timestamp(seconds: 1_793_462_400))  // 2026-10-31T16:00:00Z
    }

    /// The zone is named as what is wrong (audit 35 L1: the message said to fix --since), with
    /// the name this machine knows when only the letter case differs.
    @Test("a --tz this machine does not know is refused with date-only bounds")
    func unknownZoneWithDates() async throws {
        let run = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02",
                                           "--tz", "Mars/Olympus_Mons"], server: nil)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("larder: --tz \"Mars/Olympus_Mons\" is not a time zone this machine knows, so --since "
                                     + "2026-11-01 has no midnight to start from"), "\(run.stderr)")
        let lower = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02",
                                             "--tz", "asia/taipei"], server: nil)
        #expect(lower.status == 2)
        #expect(lower.stderr.contains("--tz \"asia/taipei\" is not a time zone this machine knows (did you mean "
                                      + "\"Asia/Taipei\"? zone names are case-sensitive)"), "\(lower.stderr)")
    }

    /// A zone the server refuses is named as the user gave it: by --tz, or as this machine's
    /// (found by an audit: TZ=Factory was reported as `--tz "Factory"`, a flag not typed).
    @Test("a refused zone of this machine is not called --tz", arguments: [
        ([], "INVALID_ARGUMENT: this machine's time zone (TZ or /etc/localtime) \"Asia/Taipei\" is not an IANA time zone name"),
        (["--tz", "Asia/Taipei"], "INVALID_ARGUMENT: --tz \"Asia/Taipei\" is not an IANA time zone name"),
    ])
    func refusedZoneNamesItsSource(extra: [String], message: String) async throws {
        let server = try FakeServer()
        let run = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02"] + extra,
                                          server: server) { requests in
            guard let request = await requests.next() else { return }
            server.reply(ResponseEnvelope(callID: request.callID, statusCode: .invalidArgument,
                                          statusMessage: "time_zone \"Asia/Taipei\" is not an IANA time zone name"))
        }
        #expect(run.status == 13)
        #expect(run.stderr.hasPrefix(message), "\(run.stderr)")
    }

    /// TZ=UTC is sent and shown as UTC (found by an audit: Foundation calls it GMT, and the
    /// footer said "Days are local dates in GMT.").
    @Test("TZ=UTC is sent and shown by that name")
    func utcByName() async throws {
        let (request, run) = try await summarize([], localTime: LocalTime(environment: ["TZ": "UTC"]))
        #expect(run.status == 0)
        #expect(request?.timeZone == "UTC")
        #expect(run.stdout.hasSuffix("Days are local dates in UTC.\n"), "\(run.stdout)")
        #expect(LocalTime(environment: ["TZ": ":UTC"]).tzdataName == "UTC")
        #expect(LocalTime(environment: ["TZ": "posix/Asia/Taipei"]).tzdataName == "Asia/Taipei")
    }

    @Test("--tz with --utc-offset is a usage error")
    func both() async throws {
        let run = try await CLIRunner.run(["meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02",
                                           "--tz", "Asia/Taipei", "--utc-offset", "+08:00"], server: nil)
        #expect(run.status == 2)
        #expect(run.stderr.contains("give --tz or --utc-offset, not both"))
    }
}
