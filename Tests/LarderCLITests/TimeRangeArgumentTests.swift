import Foundation
import LarderAPI
import LarderCLI
import LarderWire
import Testing

/// Times outside the years 1-9999 in UTC are refused by larder itself (exit 2), as `larder call`'s
/// JSON refuses them, whether the year, the offset or the local midnight puts them there (year
/// 0000 used to reach the server and exit 13, found by an audit).
@Suite("Time options within years 1-9999")
struct TimeRangeArgumentTests {
    @Test("refused before any call", arguments: [
        (["meals", "add", "--name", "x", "--calories", "1", "--category", "snack", "--at", "0000-01-01T00:00:00Z"],
         "--at: \"0000-01-01T00:00:00Z\" is not an RFC 3339 time (year 0 is outside 1-9999)"),
        (["meals", "add", "--name", "x", "--calories", "1", "--category", "snack", "--at", "0000-12-31 23:30:00-01:00"],
         "--at: \"0000-12-31 23:30:00-01:00\" is not an RFC 3339 time (year 0 is outside 1-9999)"),
        (["meals", "list", "--since", "0001-01-01T00:00:00+00:01"],
         "--since: \"0001-01-01T00:00:00+00:01\" is 0000-12-31T23:59:00Z, outside 0001-01-01T00:00:00Z to "
            + "9999-12-31T23:59:59.999999999Z"),
        (["meals", "list", "--until", "9999-12-31T23:59:59-00:01"],
         "--until: \"9999-12-31T23:59:59-00:01\" is 10000-01-01T00:00:59Z, outside"),
        (["meals", "list", "--since", "0001-01-01"],  // midnight in Taipei (LMT, +08:06) is in year 0 in UTC
         "--since: \"0001-01-01\" is 0000-12-31T15:54:00Z, outside"),
        (["meals", "list", "--since", "0000-01-01"], "--since: \"0000-01-01\" is -0001-12-31T15:54:00Z, outside"),
    ])
    func refused(arguments: [String], message: String) async throws {
        let run = try await CLIRunner.run(arguments, server: nil)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }

    @Test("the first instant is taken")
    func firstInstant() async throws {
        let utc = LocalTime(timeZone: .gmt)
        let server = try FakeServer()
        var sent: ListMealRecordsRequest?
        let run = try await CLIRunner.run(["meals", "list", "--since", "0001-01-01", "--until", "0001-01-01T00:00:00-00:01"],
                                          server: server, localTime: utc) { requests in
            guard let request = await requests.next() else { return }
            sent = try ProtoCodec.decode(ListMealRecordsRequest.self, from: request.payload)
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(ListMealRecordsResponse())))
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(sent?.startTime == Timestamp(seconds: TimestampRange.minSeconds))
        #expect(sent?.endTime == Timestamp(seconds: TimestampRange.minSeconds + 60))
    }
}

/// A page token refused for other filters, with a date-only bound: the date is local midnight,
/// so another TZ is another filter, which the message says (found by an audit: it blamed flags
/// repeated unchanged).
@Suite("Page tokens and dates")
struct PageTokenDateTests {
    static let refusal = "page_token was issued for other filters; repeat start_time, end_time and category unchanged"

    @Test("the refusal names the time zone when a bound is a date", arguments: [
        (["--since", "2026-11-01"], true), (["--until", "2026-12-01"], true),
        (["--since", "2026-11-01T00:00:00Z"], false), ([], false),
    ])
    func refusal(bounds: [String], mentionsZone: Bool) async throws {
        let server = try FakeServer()
        let run = try await CLIRunner.run(["meals", "list", "--page-token", "t"] + bounds, server: server) { requests in
            guard let request = await requests.next() else { return }
            server.reply(ResponseEnvelope(callID: request.callID, statusCode: .invalidArgument, statusMessage: Self.refusal))
        }
        #expect(run.status == 13)
        #expect(run.stderr.hasPrefix("INVALID_ARGUMENT: --page-token was issued for other filters; repeat --since, "
                                     + "--until and --category unchanged"), "\(run.stderr)")
        #expect(run.stderr.contains("a date YYYY-MM-DD is midnight in this machine's time zone: give the same TZ")
                == mentionsZone, "\(run.stderr)")
    }
}

/// Every command with a TIME option says how TIME is read and how times are shown.
@Suite("TIME in --help")
struct TimeHelpTests {
    @Test(arguments: [["meals", "add"], ["meals", "update"], ["meals", "list"], ["meals", "summary"], ["locations", "list"]])
    func help(command: [String]) async throws {
        let run = try await CLIRunner.run(command + ["--help"], server: nil)
        #expect(run.status == 0)
        let explained = run.stdout.contains("TIME is RFC 3339 with Z or ±HH:MM")
            && run.stdout.contains("no leap second :60") && run.stdout.contains("--json shows them in UTC")
        #expect(explained == (command[0] == "meals"), "\(run.stdout)")
    }
}
