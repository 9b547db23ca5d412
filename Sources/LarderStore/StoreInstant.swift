public import LarderAPI

/// A meal's time as the store keys it: Unix milliseconds and the nanoseconds past
/// that millisecond (0-999999). Ordered like the Timestamp it stands for.
///
/// Two numbers, because nanoseconds since the epoch in one Int64 reach only
/// ±292 years around 1970, and timestamps cover years 1-9999. The millisecond
/// stays the first key column (summaries group by it, and every index range is
/// on it); the remainder breaks ties within a millisecond.
public struct StoreInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Unix milliseconds, floored.
    public var milliseconds: Int64
    /// Nanoseconds past `milliseconds`, 0-999999.
    public var nanos: Int32

    public init(milliseconds: Int64, nanos: Int32 = 0) {
        self.milliseconds = milliseconds
        self.nanos = nanos
    }

    /// The instant of a valid `time` (nanos 0-999999999), to the nanosecond.
    public init(_ time: Timestamp) {
        self.init(milliseconds: time.unixMilliseconds, nanos: time.nanos % 1_000_000)
    }

    /// The earliest and latest instants: "no bound".
    public static let min = StoreInstant(milliseconds: .min, nanos: 0)
    public static let max = StoreInstant(milliseconds: .max, nanos: 999_999)

    /// The Timestamp this instant stands for.
    public var timestamp: Timestamp {
        let base = Timestamp(unixMilliseconds: milliseconds)
        return Timestamp(seconds: base.seconds, nanos: base.nanos + nanos)
    }

    public static func < (lhs: StoreInstant, rhs: StoreInstant) -> Bool {
        (lhs.milliseconds, lhs.nanos) < (rhs.milliseconds, rhs.nanos)
    }

    /// True when a range [start, end) is exact in whole milliseconds: both bounds fall
    /// on a millisecond (or the end is `max`), so no row needs its nanoseconds compared.
    public static func isWholeMilliseconds(start: StoreInstant, end: StoreInstant) -> Bool {
        start.nanos == 0 && (end == .max || end.nanos == 0)
    }

    /// The last millisecond a row before `end` may have: `end`'s own when rows in it are
    /// compared to the nanosecond, else the one before it.
    public static func upperMilliseconds(end: StoreInstant, wholeMilliseconds: Bool) -> Int64 {
        wholeMilliseconds && end != .max ? end.milliseconds - 1 : end.milliseconds
    }

    public var description: String { "\(milliseconds)ms+\(nanos)ns" }
}
