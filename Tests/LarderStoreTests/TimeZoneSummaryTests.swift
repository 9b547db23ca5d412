import Foundation
import LarderAPI
@testable import LarderStore
import LarderWire
import Testing

/// SummarizeMealRecords by IANA time zone: local days from the system's tzdata, across
/// daylight-saving changes, on every backend.
@Suite struct TimeZoneSummaryTests {
    let db: TestDatabase

    init(_ backend: Backend) throws { db = try TestDatabase(backend) }

    static func time(_ rfc3339: String) -> Timestamp {
        let seconds = ISO8601DateFormatter().date(from: rfc3339).map { Int64($0.timeIntervalSince1970) } ?? 0
        return Timestamp(seconds: seconds)
    }

    func meal(_ at: String, _ calories: Int32 = 100) throws {
        _ = try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
            name: "meal", calories: calories, category: .dinner, eatenAt: Self.time(at))))
    }

    func days(_ zone: String, from start: String, to end: String) throws -> [String: Int32] {
        let summary = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: Self.time(start), endTime: Self.time(end), timeZone: zone))
        return Dictionary(uniqueKeysWithValues: summary.days.map { ($0.date, $0.mealCount) })
    }

    @Test(arguments: Backend.all)
    static func newYorkDaysFollowTheFallBackChange(backend: Backend) throws {
        try Self(backend).newYorkDaysFollowTheFallBackChange()
    }

    /// 2026-11-01: clocks go from 02:00 EDT back to 01:00 EST.
    func newYorkDaysFollowTheFallBackChange() throws {
        try meal("2026-10-31T16:00:00Z")   // Oct 31 12:00 EDT
        try meal("2026-11-01T03:59:59Z")   // Oct 31 23:59:59 EDT
        try meal("2026-11-01T04:30:00Z")   // Nov 1 00:30 EDT: the case
        try meal("2026-11-01T05:30:00Z")   // Nov 1 01:30 EDT
        try meal("2026-11-01T06:30:00Z")   // Nov 1 01:30 EST (the hour again)
        try meal("2026-11-02T04:30:00Z")   // Nov 1 23:30 EST
        try meal("2026-11-02T05:30:00Z")   // Nov 2 00:30 EST
        let days = try days("America/New_York", from: "2026-10-25T00:00:00Z", to: "2026-11-08T00:00:00Z")
        #expect(days == ["2026-10-31": 2, "2026-11-01": 4, "2026-11-02": 1])
    }

    @Test(arguments: Backend.all)
    static func springForwardAndZonesWithoutDaylightTime(backend: Backend) throws {
        try Self(backend).springForwardAndZonesWithoutDaylightTime()
    }

    func springForwardAndZonesWithoutDaylightTime() throws {
        try meal("2026-03-08T04:59:00Z")   // New York Mar 7 23:59 EST; Taipei Mar 8 12:59 (and so on)
        try meal("2026-03-08T05:00:00Z")   // New York Mar 8 00:00 EST
        try meal("2026-03-09T03:59:00Z")   // New York Mar 8 23:59 EDT
        try meal("2026-03-09T16:00:00Z")   // New York Mar 9 12:00 EDT; Taipei Mar 10 00:00
        #expect(try days("America/New_York", from: "2026-03-01T00:00:00Z", to: "2026-03-15T00:00:00Z")
                == ["2026-03-07": 1, "2026-03-08": 2, "2026-03-09": 1])
        #expect(try days("Asia/Taipei", from: "2026-03-01T00:00:00Z", to: "2026-03-15T00:00:00Z")
                == ["2026-03-08": 2, "2026-03-09": 1, "2026-03-10": 1])
        // The same as the fixed offset where the zone has one.
        let fixed = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: Self.time("2026-03-01T00:00:00Z"), endTime: Self.time("2026-03-15T00:00:00Z"),
            utcOffsetMinutes: 480))
        let zoned = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: Self.time("2026-03-01T00:00:00Z"), endTime: Self.time("2026-03-15T00:00:00Z"),
            timeZone: "Asia/Taipei"))
        #expect(fixed == zoned)
    }

    @Test(arguments: Backend.all)
    static func yearsPastTheListedTransitionsFollowTheZonesRule(backend: Backend) throws {
        try Self(backend).yearsPastTheListedTransitionsFollowTheZonesRule()
    }

    /// tzdata lists transitions to 2037; later ones come from the file's POSIX rule.
    func yearsPastTheListedTransitionsFollowTheZonesRule() throws {
        try meal("2040-07-01T03:30:00Z")   // New York Jun 30 23:30 EDT
        try meal("2040-12-01T04:30:00Z")   // New York Nov 30 23:30 EST
        #expect(try days("America/New_York", from: "2040-06-01T00:00:00Z", to: "2040-12-31T00:00:00Z")
                == ["2040-06-30": 1, "2040-11-30": 1])
    }

    @Test static func badZonesAreInvalidArguments() throws {
        let db = try TestDatabase()
        for (zone, offset, message) in [
            ("Mars/Olympus_Mons", Int32(0), "time_zone \"Mars/Olympus_Mons\" is not a known time zone"),
            ("../../etc/passwd", 0, "time_zone must be an IANA time zone name"),
            ("/etc/localtime", 0, "time_zone must be an IANA time zone name"),
            ("zone.tab", 0, "is not a known time zone"),
            ("America", 0, "is not a known time zone"),
            // Files of the zone directory that are no zone a client can mean, found by an audit:
            ("localtime", 0, "time_zone \"localtime\" is not an IANA time zone name"),
            ("posixrules", 0, "is not an IANA time zone name"),
            ("Factory", 0, "is not an IANA time zone name"),
            ("right/UTC", 0, "time_zone \"right/UTC\" counts leap seconds, which summaries do not"),
            ("Asia/Taipei", 480, "set time_zone or utc_offset_minutes, not both"),
        ] {
            let error = rpcError {
                try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
                    startTime: Self.time("2026-03-01T00:00:00Z"), endTime: Self.time("2026-03-02T00:00:00Z"),
                    utcOffsetMinutes: offset, timeZone: zone))
            }
            #expect(error?.code == .invalidArgument, "\(zone)")
            #expect(error?.message.contains(message) == true, "\(zone): \(String(describing: error))")
        }
    }

    /// A leap-second zone is refused by its content too, whatever name reaches it (here a
    /// zone directory inside right/; found by a review: posix/right/UTC got past the name check).
    @Test static func aLeapSecondZoneIsRefusedUnderAnyName() throws {
        let zones = TimeZoneDatabase(directory: "/usr/share/zoneinfo/right")
        let error = rpcError { _ = try zones.rules(named: "UTC", field: "time_zone") }
        #expect(error == RPCError(.invalidArgument, "time_zone \"UTC\" counts leap seconds, which summaries do not; "
            + "use the zone without \"right/\""))
        #expect(rpcError { _ = try TimeZoneDatabase.system.rules(named: "UTC", field: "time_zone") } == nil)
    }

    /// Days are YYYY-MM-DD in years 1 to 9999: a range whose local days leave them is refused
    /// (it answered "10000-01-01" and "0000-12-31", found by an audit); at UTC it is served.
    @Test static func localDaysOutsideYears1To9999AreRefused() throws {
        let db = try TestDatabase()
        let refusal = "the range from start_time to end_time reaches local days outside the years 1 to 9999"
        for (start, end, offset, zone, refused) in [
            ("9999-12-31T00:00:00Z", "9999-12-31T23:00:00Z", Int32(0), "Asia/Taipei", true),
            ("9999-12-31T00:00:00Z", "9999-12-31T23:30:00Z", 60, "", true),
            ("9999-12-31T00:00:00Z", "9999-12-31T23:00:00Z", 60, "", false),
            ("9999-12-31T00:00:00Z", "9999-12-31T15:59:59Z", 0, "Asia/Taipei", false),
            ("0001-01-01T00:00:00Z", "0001-01-02T00:00:00Z", -60, "", true),
            ("0001-01-01T00:00:00Z", "0001-01-02T00:00:00Z", 0, "America/New_York", true),
            ("0001-01-01T00:00:00Z", "0001-01-02T00:00:00Z", 0, "", false),
            ("9999-12-30T00:00:00Z", "9999-12-31T23:59:59Z", 0, "UTC", false),
        ] {
            // Year 1 by its seconds: the helper's Foundation parser counts Julian days before 1582.
            let startTime = start.hasPrefix("0001-01-01") ? Timestamp(seconds: TimestampRange.minSeconds) : Self.time(start)
            let endTime = end.hasPrefix("0001-01-02") ? Timestamp(seconds: TimestampRange.minSeconds + 86_400) : Self.time(end)
            let request = SummarizeMealRecordsRequest(startTime: startTime, endTime: endTime,
                                                      utcOffsetMinutes: offset, timeZone: zone)
            let error = rpcError { try db.read(Operations.summarizeMealRecords, request) }
            if refused {
                #expect(error?.code == .invalidArgument && error?.message.hasPrefix(refusal) == true,
                        "\(start) \(zone) \(offset): \(String(describing: error))")
            } else {
                #expect(error == nil, "\(start) \(zone) \(offset): \(String(describing: error))")
            }
        }
    }

    @Test(arguments: Backend.all)
    static func anEndOfYear10000ReachesTheLastInstant(backend: Backend) throws {
        try Self(backend).anEndOfYear10000ReachesTheLastInstant()
    }

    /// `end_time` is exclusive, so 10000-01-01T00:00:00Z, one past the last valid instant, is
    /// taken as an end of a list or summary: a meal at 9999-12-31T23:59:59.999999999Z is then
    /// in range (found by an audit: the latest end allowed left it out). Nothing else past it is.
    func anEndOfYear10000ReachesTheLastInstant() throws {
        let last = Timestamp(seconds: TimestampRange.maxSeconds, nanos: 999_999_999)
        for at in [last, Timestamp(seconds: TimestampRange.maxSeconds - 3600)] {
            _ = try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
                name: "last", calories: 10, category: .dinner, eatenAt: at)))
        }
        let end = Timestamp(seconds: TimestampRange.maxSeconds + 1)
        let start = Timestamp(seconds: TimestampRange.maxSeconds - 86_399)
        let listed = try db.read(Operations.listMealRecords, ListMealRecordsRequest(startTime: start, endTime: end))
        #expect(try listed.decoded().mealRecords.map(\.eatenAt) == [last, Timestamp(seconds: TimestampRange.maxSeconds - 3600)])
        for zone in ["UTC", "America/New_York"] {
            let summary = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
                startTime: start, endTime: end, timeZone: zone))
            #expect(summary.mealCount == 2 && summary.totalCalories == 20, "\(zone)")
        }
        let beforeLast = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: start, endTime: last))
        #expect(beforeLast.mealCount == 1)

        for (field, request) in [
            ("end_time", ListMealRecordsRequest(endTime: Timestamp(seconds: TimestampRange.maxSeconds + 1, nanos: 1))),
            ("end_time", ListMealRecordsRequest(endTime: Timestamp(seconds: TimestampRange.maxSeconds + 2))),
            ("start_time", ListMealRecordsRequest(startTime: end)),
        ] {
            let error = rpcError { _ = try db.read(Operations.listMealRecords, request) }
            #expect(error?.code == .invalidArgument && error?.message.hasPrefix("\(field) is outside years 1-9999") == true,
                    "\(String(describing: error))")
        }
        let eaten = rpcError {
            _ = try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
                name: "late", calories: 1, category: .dinner, eatenAt: end)))
        }
        #expect(eaten?.message.hasPrefix("meal_record.eaten_at is outside years 1-9999") == true)
    }

    /// Our TZif reader agrees with Foundation's TimeZone (ICU) on the offset at every
    /// hour-and-a-bit step over 1990-2100 in zones with and without daylight time.
    @Test(arguments: ["America/New_York", "Europe/Paris", "Europe/London", "Australia/Sydney", "Pacific/Auckland",
                      "Asia/Taipei", "Asia/Kolkata", "America/Sao_Paulo", "Africa/Casablanca", "UTC"])
    static func offsetsAgreeWithFoundation(zone: String) throws {
        let rules = try TimeZoneDatabase.system.rules(named: zone, field: "time_zone")
        let reference = try #require(TimeZone(identifier: zone))
        var mismatches: [String] = []
        // 1990-01-01 to 2100-01-01 in steps of 4 h 7 min, so every hour of the day is hit.
        var t: Int64 = 631_152_000
        while t < 4_102_444_800, mismatches.count < 5 {
            let expected = Int64(reference.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t))))
            if rules.offset(at: t) != expected { mismatches.append("\(t): \(rules.offset(at: t)) != \(expected)") }
            t += 4 * 3600 + 7 * 60
        }
        #expect(mismatches.isEmpty, "\(zone): \(mismatches)")
    }

    @Test static func segmentsSplitARangeAtEachChangeOfOffset() throws {
        let rules = try TimeZoneDatabase.system.rules(named: "America/New_York", field: "time_zone")
        // 2026-01-01 to 2027-01-01: EST, EDT from Mar 8 07:00Z, EST from Nov 1 06:00Z.
        let segments = rules.segments(from: 1_767_225_600, to: 1_798_761_600)
        #expect(segments.map(\.start) == [1_767_225_600, 1_772_953_200, 1_793_512_800])
        #expect(segments.map(\.offset) == [-18_000, -14_400, -18_000])
    }
}
