import LarderAPI

/// RFC 3339 timestamps (`2026-11-30T08:00:00+08:00`, `2026-11-30T00:00:00.250Z`),
/// parsed and formatted without Foundation.
public enum RFC3339 {
    /// Why a timestamp did not parse.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `t`, `z` and a space separator are accepted too.
    public static func parse(_ text: String) throws(ParseError) -> Timestamp {
        var scanner = Scanner(Array(text.utf8))
        func fail(_ why: String) -> ParseError {
            ParseError(description: "\"\(text)\" is not an RFC 3339 time (\(why)); expected e.g. 2026-11-30T08:00:00+08:00")
        }
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2), scanner.take("-"),
              let day = scanner.digits(2)
        else { throw fail("bad date") }
        guard scanner.take("T") || scanner.take("t") || scanner.take(" ") else { throw fail("missing 'T' and time") }
        guard let hour = scanner.digits(2), scanner.take(":"), let minute = scanner.digits(2), scanner.take(":"),
              let second = scanner.digits(2)
        else { throw fail("bad time of day") }
        var nanos = 0
        if scanner.take(".") {
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
        if scanner.take("Z") || scanner.take("z") {
            offsetMinutes = 0
        } else if let sign = scanner.sign() {
            guard let hours = scanner.digits(2), scanner.take(":"), let minutes = scanner.digits(2),
                  hours <= 23, minutes <= 59
            else { throw fail("bad UTC offset") }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            throw fail("missing UTC offset such as Z or +08:00")
        }
        guard scanner.atEnd else { throw fail("unexpected text at the end") }
        guard (1...12).contains(month), (1...CivilDate.daysInMonth(year: year, month: month)).contains(day) else {
            throw fail("no such date")
        }
        guard hour <= 23, minute <= 59, second <= 59 else { throw fail("no such time of day") }
        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return Timestamp(seconds: Int64(seconds), nanos: Int32(nanos))
    }

    /// Parses a local calendar date `YYYY-MM-DD`; nil when `text` is not one.
    static func parseDate(_ text: String) -> CivilDate? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2), scanner.take("-"),
              let day = scanner.digits(2), scanner.atEnd, (1...12).contains(month),
              (1...CivilDate.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        return CivilDate(year: year, month: month, day: day)
    }

    /// `timestamp` at `offset`: `2026-11-30T08:00:00+08:00`, with `Z` for UTC when `useZ`.
    /// Fractions are printed with 3, 6 or 9 digits as needed.
    public static func format(_ timestamp: Timestamp, offset: UTCOffset = .utc, useZ: Bool = true) -> String {
        let local = timestamp.seconds + Int64(offset.minutes * 60)
        var days = Int(local / 86_400)
        var secondOfDay = Int(local % 86_400)
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let date = CivilDate(daysSinceEpoch: days)
        var text = fourDigits(date.year) + "-" + twoDigits(date.month) + "-" + twoDigits(date.day)
        text += "T" + twoDigits(secondOfDay / 3600) + ":" + twoDigits(secondOfDay / 60 % 60) + ":"
            + twoDigits(secondOfDay % 60)
        text += fraction(Int(timestamp.nanos))
        text += offset.minutes == 0 && useZ ? "Z" : offset.description
        return text
    }

    /// The local calendar date of `timestamp` at `offset`, `YYYY-MM-DD`.
    static func formatDate(_ date: CivilDate) -> String {
        fourDigits(date.year) + "-" + twoDigits(date.month) + "-" + twoDigits(date.day)
    }

    private static func fraction(_ nanos: Int) -> String {
        guard nanos > 0 else { return "" }
        var digits = String(nanos)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        if nanos % 1_000_000 == 0 { return "." + digits.prefix(3) }
        if nanos % 1_000 == 0 { return "." + digits.prefix(6) }
        return "." + digits
    }

    private static func fourDigits(_ value: Int) -> String {
        let text = String(abs(value))
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    /// A cursor over ASCII bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard let ascii = character.asciiValue, index < bytes.count, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return nil }
            defer { index += 1 }
            return Int(bytes[index] - 0x30)
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }
    }
}
