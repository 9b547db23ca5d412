import LarderWire
import Testing

@Suite("CivilDate")
struct CivilDateTests {
    @Test("days since 1970-01-01 and back", arguments: [
        (Int64(0), 1970, 1, 1, "1970-01-01"), (-1, 1969, 12, 31, "1969-12-31"), (19_722, 2023, 12, 31, "2023-12-31"),
        (11_016, 2000, 2, 29, "2000-02-29"), (-25_508, 1900, 3, 1, "1900-03-01"), (-719_162, 1, 1, 1, "0001-01-01"),
        (2_932_896, 9999, 12, 31, "9999-12-31"), (20_786, 2026, 11, 29, "2026-11-29"), (-719_163, 0, 12, 31, "0000-12-31"),
        (-719_528, 0, 1, 1, "0000-01-01"), (-719_529, -1, 12, 31, "-0001-12-31"), (2_932_897, 10_000, 1, 1, "10000-01-01"),
    ])
    func knownDays(days: Int64, year: Int, month: Int, day: Int, text: String) throws {
        let date = try #require(CivilDate(year: year, month: month, day: day))
        #expect(date.daysSinceEpoch == days)
        #expect(CivilDate(daysSinceEpoch: days) == date)
        #expect(date.description == text)
    }

    /// Walks every day from 1600-01-01 to 2400-12-31 by hand (next day, next month, next year) and checks
    /// both conversions against the count: every leap rule (1700, 1900, 2100 are not leap years; 1600, 2000,
    /// 2400 are) and the days before 1970.
    @Test("every day 1600-2400 against a day-by-day walk")
    func walk() throws {
        var (year, month, day) = (1600, 1, 1)
        var days = try #require(CivilDate(year: 1600, month: 1, day: 1)).daysSinceEpoch
        #expect(days == -135_140)
        while year <= 2400 {
            let date = CivilDate(daysSinceEpoch: days)
            guard date.year == year, date.month == month, date.day == day,
                  CivilDate(year: year, month: month, day: day)?.daysSinceEpoch == days
            else {
                Issue.record("day \(days): got \(date), expected \(year)-\(month)-\(day)")
                return
            }
            days += 1
            day += 1
            if day > CivilDate.daysInMonth(month, year: year) { (month, day) = (month + 1, 1) }
            if month > 12 { (year, month) = (year + 1, 1) }
        }
        #expect(days == CivilDate(year: 2401, month: 1, day: 1)?.daysSinceEpoch)
    }

    @Test("round trip over far days, both sides of the epoch",
          arguments: Array(stride(from: Int64(-40_000_000), through: 40_000_000, by: 999_983)))
    func roundTrip(days: Int64) {
        for day in days..<days + 3 {
            let date = CivilDate(daysSinceEpoch: day)
            #expect(date.daysSinceEpoch == day, "\(date)")
            #expect(CivilDate(year: date.year, month: date.month, day: date.day) == date)
        }
    }

    @Test("leap years", arguments: [(2024, true), (2023, false), (2000, true), (1900, false), (2100, false),
                                    (1600, true), (0, true), (-4, true), (-100, false)])
    func leapYears(year: Int, leap: Bool) {
        #expect(CivilDate.isLeapYear(year) == leap)
        #expect(CivilDate.daysInMonth(2, year: year) == (leap ? 29 : 28))
        #expect((CivilDate(year: year, month: 2, day: 29) != nil) == leap)
    }

    @Test("no such date", arguments: [(2026, 0, 1), (2026, 13, 1), (2026, 4, 31), (2026, 1, 0), (2026, 12, 32)])
    func invalid(year: Int, month: Int, day: Int) {
        #expect(CivilDate(year: year, month: month, day: day) == nil)
    }

    @Test("parse YYYY-MM-DD", arguments: [("2026-11-30", 2026, 11, 30), ("0001-01-01", 1, 1, 1),
                                          ("2000-02-29", 2000, 2, 29)])
    func parse(text: String, year: Int, month: Int, day: Int) {
        #expect(CivilDate(parsing: text) == CivilDate(year: year, month: month, day: day))
    }

    @Test("parse refuses what is not exactly a date", arguments: [
        "", "2026-11-3", "26-11-30", "2026/11/30", "2026-11-30 ", "2026-11-30T00:00:00Z", "2026-02-29", "2026-13-01",
        "2026-11-00", "２０２６-11-30", "-2026-11-30",
    ])
    func parseRejects(text: String) {
        #expect(CivilDate(parsing: text) == nil)
    }
}
