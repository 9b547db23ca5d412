/// RFC 3339 times (`2026-11-30T08:00:00+08:00`, `2026-11-30T00:00:00.250Z`) as
/// seconds and nanoseconds since the Unix epoch, parsed and formatted without Foundation.
public enum RFC3339 {
    /// Why a time did not parse; `description` names the text and the rule it broke.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`: 1-9 fraction digits, offsets up to ±23:59,
    /// `t` and `z` too.
    /// - Parameters:
    ///   - allowingSpace: accept a space instead of `T` between date and time (RFC 3339 §5.6 note).
    ///   - years: the years allowed in the text (before the offset is applied).
    /// - Throws: `ParseError` saying what is wrong.
    public static func parse(_ text: String, allowingSpace: Bool = false, years: ClosedRange<Int> = 0...9999)
        throws(ParseError) -> (seconds: Int64, nanos: Int32)
    {
        var scanner = ASCIIScanner(text)
        func fail(_ why: String) -> ParseError {
            ParseError(description: "\(SafeText.quoted(text)) is not an RFC 3339 time (\(why)); expected e.g. 2026-11-30T08:00:00+08:00")
        }
        guard let (year, month, day) = scanner.dateFields() else { throw fail("bad date") }
        // Checked first, so that a mistyped date alone ("2026-13-01") is named as what is wrong.
        guard let date = CivilDate(year: year, month: month, day: day) else { throw fail("no such date") }
        guard scanner.take(anyOf: allowingSpace ? "Tt " : "Tt") else { throw fail("missing 'T' and time") }
        guard let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")), let minute = scanner.digits(2),
              scanner.take(UInt8(ascii: ":")), let second = scanner.digits(2)
        else { throw fail("bad time of day") }
        var nanos = 0
        if scanner.take(UInt8(ascii: ".")) {
            var count = 0
            while let digit = scanner.digit() {
                count += 1
                if count <= 9 { nanos = nanos * 10 + digit }
            }
            guard count > 0 else { throw fail("no digits after '.'") }
            guard count <= 9 else { throw fail("more than 9 fraction digits") }
            for _ in count..<9 { nanos *= 10 }
        }
        let offsetMinutes: Int
        if scanner.take(anyOf: "Zz") {
            offsetMinutes = 0
        } else if let sign = scanner.sign() {
            guard let hours = scanner.digits(2), scanner.take(UInt8(ascii: ":")), let minutes = scanner.digits(2),
                  hours <= 23, minutes <= 59
            else { throw fail("bad UTC offset") }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            throw fail("missing UTC offset such as Z or +08:00")
        }
        guard scanner.atEnd else { throw fail("unexpected text at the end") }
        guard years.contains(year) else { throw fail("year \(year) is outside \(years.lowerBound)-\(years.upperBound)") }
        guard hour <= 23, minute <= 59, second <= 59 else { throw fail("no such time of day") }
        let secondOfDay = Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        return (date.daysSinceEpoch * 86_400 + secondOfDay, Int32(nanos))
    }

    /// The time `seconds` + `nanos` after the epoch as seen at `offsetMinutes` east of UTC (within ±23:59),
    /// e.g. `2026-11-30T08:00:00+08:00`; `Z` instead of `+00:00` when `useZ`.
    /// The fraction has 3, 6 or 9 digits as needed, none when `nanos` is not 1-999999999.
    public static func format(seconds: Int64, nanos: Int32, offsetMinutes: Int = 0, useZ: Bool = true) -> String {
        var days = floorDivide(seconds, 86_400)
        var secondOfDay = seconds - days * 86_400 + Int64(offsetMinutes) * 60
        days += floorDivide(secondOfDay, 86_400)
        secondOfDay -= floorDivide(secondOfDay, 86_400) * 86_400
        let clock = Int(secondOfDay)
        var text = CivilDate(daysSinceEpoch: days).description + "T" + CivilDate.twoDigits(clock / 3600) + ":"
            + CivilDate.twoDigits(clock / 60 % 60) + ":" + CivilDate.twoDigits(clock % 60)
        text += fraction(nanos)
        text += offsetMinutes == 0 && useZ ? "Z" : formatOffset(minutes: offsetMinutes)
        return text
    }

    /// `+08:00`, `-05:30`, `+00:00` for an offset in minutes east of UTC.
    public static func formatOffset(minutes: Int) -> String {
        let magnitude = Int(minutes.magnitude)
        return (minutes < 0 ? "-" : "+") + CivilDate.twoDigits(magnitude / 60) + ":"
            + CivilDate.twoDigits(magnitude % 60)
    }

    private static func fraction(_ nanos: Int32) -> String {
        guard (1...999_999_999).contains(nanos) else { return "" }
        let digits = String(nanos)
        let nine = String(repeating: "0", count: 9 - digits.count) + digits
        if nanos % 1_000_000 == 0 { return "." + nine.prefix(3) }
        if nanos % 1_000 == 0 { return "." + nine.prefix(6) }
        return "." + nine
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
