public import LarderWire

extension Timestamp {
    /// Parses an RFC 3339 time such as `2026-11-30T08:00:00+08:00` (see `RFC3339.parse`).
    /// - Throws: `RFC3339.ParseError` naming the text and what is wrong with it.
    public init(rfc3339 text: String, allowingSpace: Bool = false) throws(RFC3339.ParseError) {
        let (seconds, nanos) = try RFC3339.parse(text, allowingSpace: allowingSpace)
        self.init(seconds: seconds, nanos: nanos)
    }

    /// This time as RFC 3339 at `offsetMinutes` east of UTC, `Z` for UTC when `useZ` (see `RFC3339.format`).
    public func rfc3339(offsetMinutes: Int = 0, useZ: Bool = true) -> String {
        RFC3339.format(seconds: seconds, nanos: nanos, offsetMinutes: offsetMinutes, useZ: useZ)
    }
}
