/// `google.protobuf.Timestamp` in its proto3 JSON form: RFC 3339, e.g.
/// `2026-11-30T08:00:00.120Z`. Output is UTC with 0, 3, 6 or 9 fractional
/// digits; input may carry any offset (`+08:00`) and 0-9 fractional digits.
public enum RFC3339Timestamp {
    /// 0001-01-01T00:00:00Z, the smallest Timestamp the mapping allows.
    public static let minSeconds: Int64 = -62_135_596_800
    /// 9999-12-31T23:59:59Z, the largest.
    public static let maxSeconds: Int64 = 253_402_300_799

    /// The RFC 3339 text, or nil when the value is outside years 1-9999 or nanos is not 0-999999999.
    public static func format(seconds: Int64, nanos: Int32) -> String? {
        guard (minSeconds...maxSeconds).contains(seconds), (0...999_999_999).contains(nanos) else { return nil }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if nanos != 0 {
            if nanos % 1_000_000 == 0 {
                text += "." + pad(Int64(nanos / 1_000_000), 3)
            } else if nanos % 1000 == 0 {
                text += "." + pad(Int64(nanos / 1000), 6)
            } else {
                text += "." + pad(Int64(nanos), 9)
            }
        }
        return text + "Z"
    }

    /// Seconds and nanos since the epoch, or nil when `text` is not RFC 3339 within years 1-9999.
    public static func parse(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        let c = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= c.count else { return nil }
            var value: Int64 = 0
            for byte in c[start..<start + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func isByte(_ index: Int, _ characters: String) -> Bool {
            index < c.count && characters.utf8.contains(c[index])
        }
        guard let year = digits(0, 4), isByte(4, "-"), let month = digits(5, 2), isByte(7, "-"),
              let day = digits(8, 2), isByte(10, "Tt"), let hour = digits(11, 2), isByte(13, ":"),
              let minute = digits(14, 2), isByte(16, ":"), let second = digits(17, 2)
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        var index = 19
        var nanos: Int64 = 0
        if isByte(index, ".") {
            index += 1
            var count = 0
            while index < c.count, c[index] >= UInt8(ascii: "0"), c[index] <= UInt8(ascii: "9") {
                guard count < 9 else { return nil }
                nanos = nanos * 10 + Int64(c[index] - UInt8(ascii: "0"))
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<9 { nanos *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if isByte(index, "Zz") {
            index += 1
        } else if isByte(index, "+-") {
            let sign: Int64 = c[index] == UInt8(ascii: "-") ? -1 : 1
            guard let offsetHours = digits(index + 1, 2), isByte(index + 3, ":"),
                  let offsetMinutes = digits(index + 4, 2), offsetHours < 24, offsetMinutes < 60 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
            index += 6
        } else {
            return nil
        }
        guard index == c.count else { return nil }
        let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
            - offsetSeconds
        guard (minSeconds...maxSeconds).contains(seconds) else { return nil }
        return (seconds, Int32(nanos))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
