import LarderWire

/// `google.protobuf.Timestamp` in its proto3 JSON form: RFC 3339, e.g.
/// `2026-11-30T08:00:00.120Z`. Output is UTC with 0, 3, 6 or 9 fractional
/// digits; input may carry any offset (`+08:00`) and 0-9 fractional digits.
/// The proto3 rules on top of `RFC3339`: years 0001-9999, `T` only, `Z` on output.
public enum RFC3339Timestamp {
    /// The RFC 3339 text, or nil when the value is outside years 1-9999 or nanos is not 0-999999999.
    public static func format(seconds: Int64, nanos: Int32) -> String? {
        guard TimestampRange.seconds.contains(seconds), (0...999_999_999).contains(nanos) else { return nil }
        return RFC3339.format(seconds: seconds, nanos: nanos)
    }

    /// Seconds and nanos since the epoch, or nil when `text` is not RFC 3339 within years 1-9999.
    public static func parse(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        guard let parsed = try? RFC3339.parse(text, years: TimestampRange.years),
              TimestampRange.seconds.contains(parsed.seconds)
        else { return nil }
        return parsed
    }
}
