/// A date in the proleptic Gregorian calendar, converted to and from days since
/// 1970-01-01 with Howard Hinnant's `days_from_civil` / `civil_from_days`
/// (exact for every day, before 1970 too), without Foundation.
public struct CivilDate: Hashable, Sendable, CustomStringConvertible {
    public let year: Int
    /// 1-12.
    public let month: Int
    /// 1 to the length of the month.
    public let day: Int

    /// - Returns: nil when `month` is not 1-12 or `day` is not a day of that month.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...Self.daysInMonth(month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` after 1970-01-01 (before it when negative).
    public init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        self.month = Int(month)
        self.year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    /// Reads exactly `YYYY-MM-DD` (ASCII digits, a real date); nil for anything else.
    public init?(parsing text: String) {
        var scanner = ASCIIScanner(text)
        guard let (year, month, day) = scanner.dateFields(), scanner.atEnd else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Days since 1970-01-01, negative before it.
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthIndex + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `YYYY-MM-DD`; the year has at least four digits and a `-` before year 0.
    public var description: String {
        let digits = String(year.magnitude)
        let paddedYear = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return (year < 0 ? "-" : "") + paddedYear + "-" + Self.twoDigits(month) + "-" + Self.twoDigits(day)
    }

    /// Whether `year` has a February 29.
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// 28-31 for `month` 1-12 of `year`.
    public static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `value` (0-99) with a leading zero below 10.
    static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
