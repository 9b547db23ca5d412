import LarderJSON
import LarderWire
import Testing

@Suite("RFC 3339 timestamps")
struct RFC3339TimestampTests {
    @Test(arguments: [
        (Int64(0), Int32(0), "1970-01-01T00:00:00Z"),
        (1_764_460_800, 120_000_000, "2025-11-30T00:00:00.120Z"),
        (1_764_460_800, 120_000, "2025-11-30T00:00:00.000120Z"),
        (1_764_460_800, 1, "2025-11-30T00:00:00.000000001Z"),
        (-1, 0, "1969-12-31T23:59:59Z"),
        (951_782_400, 0, "2000-02-29T00:00:00Z"),
        (TimestampRange.minSeconds, 0, "0001-01-01T00:00:00Z"),
        (TimestampRange.maxSeconds, 999_999_999, "9999-12-31T23:59:59.999999999Z"),
    ])
    func formatsAndParsesBack(_ seconds: Int64, _ nanos: Int32, _ text: String) throws {
        #expect(RFC3339Timestamp.format(seconds: seconds, nanos: nanos) == text)
        let parsed = try #require(RFC3339Timestamp.parse(text))
        #expect(parsed.seconds == seconds && parsed.nanos == nanos)
    }

    @Test func appliesOffsetsAndShortFractions() throws {
        let parsed = try #require(RFC3339Timestamp.parse("2026-11-30T08:00:00.5+08:00"))
        #expect(RFC3339Timestamp.format(seconds: parsed.seconds, nanos: parsed.nanos) == "2026-11-30T00:00:00.500Z")
        let west = try #require(RFC3339Timestamp.parse("2026-11-29T19:00:00-05:00"))
        #expect(west.seconds == parsed.seconds)
    }

    @Test(arguments: ["2026-11-30", "2026-11-30T08:00:00", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
                      "2026-11-30T24:00:00Z", "2026-11-30T08:00:00.Z", "2026-11-30T08:00:00.1234567890Z",
                      "2026-11-30T08:00:00+0800", "0000-12-31T00:00:00Z", "2026-11-30T08:00:00Z ",
                      "9999-12-31T23:59:59-01:00"])
    func rejects(_ text: String) {
        #expect(RFC3339Timestamp.parse(text) == nil)
    }

    @Test func refusesToFormatOutOfRange() {
        #expect(RFC3339Timestamp.format(seconds: TimestampRange.maxSeconds + 1, nanos: 0) == nil)
        #expect(RFC3339Timestamp.format(seconds: 0, nanos: -1) == nil)
    }
}
