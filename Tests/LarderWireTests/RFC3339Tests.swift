import LarderAPI
import LarderWire
import Testing

@Suite("RFC 3339")
struct RFC3339Tests {
    @Test("parse with offsets and fractions", arguments: [
        ("2026-11-30T00:00:00Z", Int64(1_795_996_800), Int32(0)),
        ("2026-11-30T08:00:00+08:00", 1_795_996_800, 0),
        ("2026-11-29T19:00:00-05:00", 1_795_996_800, 0),
        ("2026-11-30t00:00:00z", 1_795_996_800, 0),
        ("2026-11-30T00:00:00.5Z", 1_795_996_800, 500_000_000),
        ("2026-11-30T00:00:00.123456789Z", 1_795_996_800, 123_456_789),
        ("1969-12-31T23:59:59Z", -1, 0),
        ("1900-03-01T00:00:00+23:59", -2_203_977_540, 0),
        ("2000-02-29T12:30:15Z", 951_827_415, 0),
        ("0000-01-01T00:00:00Z", -62_167_219_200, 0),
        ("9999-12-31T23:59:59-23:59", 253_402_387_139, 0),
    ])
    func parse(text: String, seconds: Int64, nanos: Int32) throws {
        let parsed = try RFC3339.parse(text)
        #expect(parsed.seconds == seconds && parsed.nanos == nanos)
    }

    @Test("errors name the text and the rule", arguments: [
        ("", "bad date"), ("26-11-30T08:00:00Z", "bad date"), ("２０２６-11-30T08:00:00Z", "bad date"),
        ("2026-11-30", "missing 'T' and time"), ("2026-11-30 08:00:00Z", "missing 'T' and time"),
        ("2026-11-30T08:00Z", "bad time of day"), ("2026-11-30T08:00:00.Z", "no digits after '.'"),
        ("2026-11-30T08:00:00.1234567890Z", "more than 9 fraction digits"),
        ("2026-11-30T08:00:00+0800", "bad UTC offset"), ("2026-11-30T08:00:00+24:00", "bad UTC offset"),
        ("2026-11-30T08:00:00-08:60", "bad UTC offset"),
        ("2026-11-30T08:00:00", "missing UTC offset such as Z or +08:00"),
        ("2026-11-30T08:00:00Zjunk", "unexpected text at the end"),
        ("2026-13-01T00:00:00Z", "no such date"), ("2026-02-29T00:00:00Z", "no such date"),
        ("2026-11-31T00:00:00Z", "no such date"), ("2026-13-01", "no such date"), ("2026-11-30T24:00:00Z", "no such time of day"),
        ("2026-11-30T08:60:00Z", "no such time of day"), ("2026-11-30T08:00:60Z", "no such time of day"),
    ])
    func errors(text: String, why: String) {
        let error = #expect(throws: RFC3339.ParseError.self) { try RFC3339.parse(text) }
        #expect(error?.description == "\"\(text)\" is not an RFC 3339 time (\(why)); expected e.g. 2026-11-30T08:00:00+08:00")
    }

    @Test("a space separator and the year range are opt-in")
    func options() throws {
        #expect(try RFC3339.parse("2026-11-30 05:30:00+05:30", allowingSpace: true).seconds == 1_795_996_800)
        let error = #expect(throws: RFC3339.ParseError.self) {
            try RFC3339.parse("0000-12-31T23:00:00-01:00", years: 1...9999)
        }
        #expect(error?.description == "\"0000-12-31T23:00:00-01:00\" is not an RFC 3339 time "
            + "(year 0 is outside 1-9999); expected e.g. 2026-11-30T08:00:00+08:00")
        #expect(try RFC3339.parse("0001-01-01T00:00:00Z", years: 1...9999).seconds == -62_135_596_800)
    }

    @Test("TimestampRange is years 0001-9999 in UTC")
    func timestampRange() {
        #expect(RFC3339.format(seconds: TimestampRange.minSeconds, nanos: 0) == "0001-01-01T00:00:00Z")
        #expect(RFC3339.format(seconds: TimestampRange.maxSeconds, nanos: 0) == "9999-12-31T23:59:59Z")
        #expect(TimestampRange.years == 1...9999 && TimestampRange.seconds.count == 253_402_300_799 + 62_135_596_800 + 1)
    }

    @Test("format in UTC and at offsets", arguments: [
        (Int64(1_795_996_800), Int32(0), 0, "2026-11-30T00:00:00Z"),
        (1_795_996_800, 0, 480, "2026-11-30T08:00:00+08:00"),
        (1_795_996_800, 0, -300, "2026-11-29T19:00:00-05:00"),
        (1_795_996_800, 250_000_000, 0, "2026-11-30T00:00:00.250Z"),
        (1_795_996_800, 1_000, 0, "2026-11-30T00:00:00.000001Z"),
        (1_795_996_800, 7, 0, "2026-11-30T00:00:00.000000007Z"),
        (-1, 0, 0, "1969-12-31T23:59:59Z"),
        (-1, 999_999_999, -840, "1969-12-31T09:59:59.999999999-14:00"),
        (951_827_415, 0, 330, "2000-02-29T18:00:15+05:30"),
        (-62_135_596_800, 0, 0, "0001-01-01T00:00:00Z"),
        (-62_135_596_800, 0, -60, "0000-12-31T23:00:00-01:00"),
    ])
    func format(seconds: Int64, nanos: Int32, offsetMinutes: Int, expected: String) throws {
        #expect(RFC3339.format(seconds: seconds, nanos: nanos, offsetMinutes: offsetMinutes) == expected)
        let parsed = try RFC3339.parse(expected)
        #expect(parsed.seconds == seconds && parsed.nanos == nanos)
    }

    @Test("useZ: false writes +00:00; nanos outside 1-999999999 write no fraction")
    func formatOptions() {
        #expect(RFC3339.format(seconds: 0, nanos: 0, useZ: false) == "1970-01-01T00:00:00+00:00")
        #expect(RFC3339.format(seconds: 0, nanos: -5) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.format(seconds: 0, nanos: 1_000_000_000) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.formatOffset(minutes: -330) == "-05:30")
        #expect(RFC3339.formatOffset(minutes: 0) == "+00:00")
        #expect(RFC3339.formatOffset(minutes: 840) == "+14:00")
    }

    @Test("round trip from year 1 to 9999 at every kind of offset and fraction",
          arguments: Array(stride(from: Int64(-62_135_596_800), through: 253_402_300_799 - 86_400, by: 7_777_777_777)))
    func roundTrip(start: Int64) throws {
        for (step, offset) in [0, 1, -1, 59, 330, -570, 840, -840, 1439, -1439].enumerated() {
            let seconds = start + Int64(step) * 8_641
            let nanos = Int32([0, 1, 120_000_000, 999_999_999, 5_000, 123_456_789][step % 6])
            let text = RFC3339.format(seconds: seconds, nanos: nanos, offsetMinutes: offset)
            let parsed = try RFC3339.parse(text)
            #expect(parsed.seconds == seconds && parsed.nanos == nanos, "\(text)")
            #expect(try Timestamp(rfc3339: text) == Timestamp(seconds: seconds, nanos: nanos))
            #expect(Timestamp(seconds: seconds, nanos: nanos).rfc3339(offsetMinutes: offset) == text)
        }
    }
}
