import Foundation
import LarderAPI
import LarderCLI
import LarderWire
import Testing

@Suite("Local time and UTC offsets")
struct LocalTimeTests {
    static let utc = LocalTime(timeZone: .gmt)

    @Test("read RFC 3339 with offsets and fractions; a space may stand for T", arguments: [
        ("2026-11-30T00:00:00Z", Int64(1_795_996_800), Int32(0)),
        ("2026-11-30T08:00:00+08:00", 1_795_996_800, 0),
        ("2026-11-29T19:00:00-05:00", 1_795_996_800, 0),
        ("2026-11-30t00:00:00z", 1_795_996_800, 0),
        ("2026-11-30 05:30:00+05:30", 1_795_996_800, 0),
        ("2026-11-30T00:00:00.5Z", 1_795_996_800, 500_000_000),
        ("2026-11-30T00:00:00.123456789Z", 1_795_996_800, 123_456_789),
        ("1969-12-31T23:59:59Z", -1, 0),
        ("2000-02-29T12:30:15Z", 951_827_415, 0),
    ])
    func parse(text: String, seconds: Int64, nanos: Int32) throws {
        #expect(try Self.utc.parse(text) == Timestamp(seconds: seconds, nanos: nanos))
        #expect(try CLIRunner.taipei.parse(text) == Timestamp(seconds: seconds, nanos: nanos))
    }

    @Test("reject what is neither RFC 3339 nor a date", arguments: [
        "", "2026-11-30T08:00:00", "2026-11-30T08:00Z", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
        "2026-11-31T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T08:60:00Z", "2026-11-30T08:00:60Z",
        "2026-11-30T08:00:00.Z", "2026-11-30T08:00:00.1234567890Z", "2026-11-30T08:00:00+0800",
        "2026-11-30T08:00:00+24:00", "2026-11-30T08:00:00Zjunk", "26-11-30T08:00:00Z", "２０２６-11-30T08:00:00Z",
        "2026-02-29", "2026-11-30 ",
    ])
    func reject(text: String) {
        let error = #expect(throws: RFC3339.ParseError.self) { try Self.utc.parse(text) }
        #expect(error?.description.hasPrefix("\"\(text)\" is not an RFC 3339 time (") == true)
    }

    @Test("format at the zone's offset, +00:00 rather than Z", arguments: [
        (Timestamp(seconds: 1_795_996_800), 0, "2026-11-30T00:00:00+00:00"),
        (Timestamp(seconds: 1_795_996_800), 480, "2026-11-30T08:00:00+08:00"),
        (Timestamp(seconds: 1_795_996_800), -300, "2026-11-29T19:00:00-05:00"),
        (Timestamp(seconds: 1_795_996_800, nanos: 250_000_000), 0, "2026-11-30T00:00:00.250+00:00"),
        (Timestamp(seconds: -1), 0, "1969-12-31T23:59:59+00:00"),
        (Timestamp(seconds: 951_827_415), 330, "2000-02-29T18:00:15+05:30"),
    ])
    func format(timestamp: Timestamp, offsetMinutes: Int, expected: String) throws {
        let zone = LocalTime(timeZone: try #require(TimeZone(secondsFromGMT: offsetMinutes * 60)))
        #expect(zone.format(timestamp) == expected)
        #expect(try zone.parse(expected) == timestamp)
    }

    @Test("local time: formatting and dates as local midnight, across DST")
    func localTime() throws {
        let taipei = LocalTime(timeZone: try #require(TimeZone(identifier: "Asia/Taipei")))
        #expect(taipei.format(Timestamp(seconds: 1_795_996_800)) == "2026-11-30T08:00:00+08:00")
        #expect(try taipei.parse("2026-11-30") == Timestamp(seconds: 1_795_996_800 - 8 * 3600))
        #expect(try taipei.parse("2026-11-30T00:00:00Z") == Timestamp(seconds: 1_795_996_800))

        let newYork = LocalTime(timeZone: try #require(TimeZone(identifier: "America/New_York")))
        // 2026-03-08 is the day clocks spring forward; midnight is still EST (-05:00).
        #expect(newYork.format(try newYork.parse("2026-03-08")) == "2026-03-08T00:00:00-05:00")
        #expect(newYork.format(try newYork.parse("2026-07-01")) == "2026-07-01T00:00:00-04:00")
        #expect(LocalTime(environment: ["TZ": "Asia/Taipei"]).timeZone.identifier == "Asia/Taipei")
    }

    /// A date is its day's first instant: on a day whose midnight the clocks skip, the end of the
    /// change (west of Greenwich the old one-step correction gave 23:00 the day before); on one
    /// where they repeat it, its first occurrence.
    @Test("a date on a day whose midnight is skipped or repeated", arguments: [
        ("America/Santiago", "2026-09-06", "2026-09-06T01:00:00-03:00"),  // skipped, behind UTC
        ("America/Havana", "2026-03-08", "2026-03-08T01:00:00-04:00"),
        ("Africa/Cairo", "2026-04-24", "2026-04-24T01:00:00+03:00"),  // skipped, ahead of UTC
        ("America/Santiago", "2026-04-05", "2026-04-05T00:00:00-04:00"),  // the 4th's last hour repeats
        ("America/Havana", "2026-11-01", "2026-11-01T00:00:00-04:00"),  // midnight repeats
        ("America/New_York", "2026-11-01", "2026-11-01T00:00:00-04:00"),
    ])
    func dayStart(zone: String, date: String, expected: String) throws {
        let local = LocalTime(timeZone: try #require(TimeZone(identifier: zone)))
        #expect(local.format(try local.parse(date)) == expected)
    }

    @Test("a TZ this machine does not know is warned about, not silently replaced")
    func unknownTZ() {
        for name in ["Mars/Base", "CST-8CDT,M3.2.0,M11.1.0", "/tmp/Asia/Tokyo", "/usr/share/zoneinfo/right/UTC", "AB-8"] {
            let warning = LocalTime.unknownZoneWarning(environment: ["TZ": name])
            #expect(warning?.contains("TZ=\"\(name)\" is not a time zone this machine knows") == true, "\(String(describing: warning))")
            #expect(warning?.contains("times are shown, dates YYYY-MM-DD read and summary days counted in ") == true)
        }
        for environment in [["TZ": "Asia/Taipei"], ["TZ": ":Europe/Paris"], ["TZ": ""], [:]] {
            #expect(LocalTime.unknownZoneWarning(environment: environment) == nil)
        }
    }

    /// A local mean time offset has seconds (Africa/Monrovia: -00:44:30 until 1972): local
    /// midnight is found with it, as the server counts days, and such a time, which RFC 3339
    /// cannot write at its offset, is shown in UTC (found by an audit: midnight came 30 s early,
    /// so a summary showed the day before, and 12:00Z showed as 11:16:00-00:44).
    @Test("offsets with seconds: exact midnight, shown in UTC")
    func localMeanTime() throws {
        let monrovia = LocalTime(timeZone: try #require(TimeZone(identifier: "Africa/Monrovia")))
        let midnight = Timestamp(seconds: 13_046_400 + 44 * 60 + 30)  // 1970-06-01T00:44:30Z
        #expect(try monrovia.parse("1970-06-01") == midnight)
        #expect(monrovia.offsetSeconds(at: midnight.seconds) == -(44 * 60 + 30))
        #expect(monrovia.format(Timestamp(seconds: 13_046_400 + 12 * 3600)) == "1970-06-01T12:00:00Z")
        #expect(monrovia.format(Timestamp(seconds: 1_795_996_800)) == "2026-11-30T00:00:00+00:00")
    }

    /// A time whose local year is 0 or 10000 is shown in UTC, which larder reads back (found by
    /// an audit: 10000-01-01T13:59:59.999999999+14:00 was refused as input).
    @Test("local years outside 0001-9999 are shown in UTC")
    func localYearsOutsideTheRange() throws {
        let kiritimati = LocalTime(timeZone: try #require(TimeZone(identifier: "Pacific/Kiritimati")))
        let last = Timestamp(seconds: TimestampRange.maxSeconds, nanos: 999_999_999)
        #expect(kiritimati.format(last) == "9999-12-31T23:59:59.999999999Z")
        #expect(try kiritimati.parse(kiritimati.format(last)) == last)
        #expect(kiritimati.format(Timestamp(seconds: TimestampRange.maxSeconds - 14 * 3600))
                == "9999-12-31T23:59:59+14:00")
        let west = LocalTime(timeZone: try #require(TimeZone(secondsFromGMT: -3600)))
        #expect(west.format(Timestamp(seconds: TimestampRange.minSeconds + 1800)) == "0001-01-01T00:30:00Z")
        #expect(west.format(Timestamp(seconds: TimestampRange.minSeconds + 3600)) == "0001-01-01T00:00:00-01:00")
    }

    /// TZ as glibc reads it: a zone file by its absolute path or under posix/, and a POSIX rule
    /// without daylight time (found by an audit: these fell back to UTC with a warning).
    @Test("TZ values glibc accepts", arguments: [
        ("/usr/share/zoneinfo/Asia/Tokyo", "Asia/Tokyo", 9 * 3600), (":/usr/share/zoneinfo/Asia/Tokyo", "Asia/Tokyo", 9 * 3600),
        ("posix/Asia/Taipei", "Asia/Taipei", 8 * 3600), (":posix/Asia/Taipei", "Asia/Taipei", 8 * 3600),
        ("<+0330>-3:30", nil, 12_600), ("CST-8", nil, 28_800), ("EST+5", nil, -18_000), ("<-01>1:00:30", nil, -3630),
        // West of UTC as glibc reads them (Foundation alone took GMT+5 for 5 h east: review 18).
        ("GMT+5", nil, -18_000), ("UTC+2", nil, -7_200), ("GMT-3", nil, 10_800),
        // Zone files of these names: their own rules.
        ("Etc/GMT+5", "Etc/GMT+5", -18_000), ("EST5EDT", "EST5EDT", -18_000), ("GMT0", nil, 0), ("UTC", nil, 0),
    ] as [(String, String?, Int)])
    func glibcZones(tz: String, identifier: String?, offset: Int) {
        let local = LocalTime(environment: ["TZ": tz])
        #expect(LocalTime.unknownZoneWarning(environment: ["TZ": tz]) == nil)
        if let identifier { #expect(local.timeZone.identifier == identifier) }
        #expect(local.offsetSeconds(at: 1_795_996_800) == offset, "\(local.timeZone.identifier)")
    }

    @Test("UTC offsets", arguments: [
        ("+08:00", 480), ("-05:30", -330), ("Z", 0), ("UTC", 0), ("+0800", 480), ("+8", 480), ("-10", -600),
        ("+14:00", 840),
    ])
    func offsets(text: String, minutes: Int) {
        #expect(UTCOffset(parsing: text)?.minutes == minutes)
    }

    @Test("bad UTC offsets", arguments: ["08:00", "+15:00", "+08:60", "+8:00", "+08:0", "", "+", "+0a:00", "+08::0"])
    func badOffsets(text: String) {
        #expect(UTCOffset(parsing: text) == nil)
    }

    @Test("offset description")
    func offsetDescription() {
        #expect(UTCOffset(minutes: -330)?.description == "-05:30")
        #expect(UTCOffset(minutes: 0)?.description == "+00:00")
        #expect(UTCOffset(minutes: 841) == nil)
    }
}
