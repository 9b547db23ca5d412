/// The range of `google.protobuf.Timestamp` values Larder accepts and prints: years 0001 to
/// 9999 in UTC, as the well-known type's documentation and the proto3 JSON mapping restrict it.
public enum TimestampRange {
    /// 0001-01-01T00:00:00Z.
    public static let minSeconds: Int64 = -62_135_596_800
    /// 9999-12-31T23:59:59Z (with any nanos up to 999,999,999).
    public static let maxSeconds: Int64 = 253_402_300_799
    /// `minSeconds...maxSeconds`.
    public static let seconds: ClosedRange<Int64> = minSeconds...maxSeconds
    /// The years of an RFC 3339 text that can fall in the range (before its offset is applied).
    public static let years: ClosedRange<Int> = 1...9999
}
