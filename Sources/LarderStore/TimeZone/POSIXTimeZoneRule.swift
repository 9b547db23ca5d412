import LarderWire

/// The rule of a POSIX `TZ` string (the footer of a TZif file), such as
/// `EST5EDT,M3.2.0,M11.1.0`: the offsets in force after a zone's last
/// listed transition, repeated every year.
struct POSIXTimeZoneRule: Hashable, Sendable {
    /// When in a year a change happens: a day of the year and seconds past its local midnight.
    enum Day: Hashable, Sendable {
        /// `Jn`: day n (1-365), February 29 never counted.
        case julian(Int)
        /// `n`: day n (0-365) counting February 29 in leap years.
        case zeroBased(Int)
        /// `Mm.w.d`: day d (0 = Sunday) of week w (5 = last) of month m.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    struct Change: Hashable, Sendable {
        var day: Day
        /// Local time of the change, in seconds (may be negative or past 24 h).
        var time: Int64
    }

    /// Seconds east of UTC of standard time.
    var standardOffset: Int64
    /// Daylight time: its offset and when it starts and ends.
    struct Daylight: Hashable, Sendable {
        /// Seconds east of UTC.
        var offset: Int64
        var start: Change
        var end: Change
    }

    /// Daylight time, for a zone that has it.
    var daylight: Daylight?

    /// Parses `text`; nil when it is not a POSIX TZ string this reader knows.
    init?(_ text: String) {
        var scanner = Scanner(Array(text.utf8))
        guard scanner.skipName(), let std = scanner.offset() else { return nil }
        standardOffset = -std
        if scanner.atEnd {
            daylight = nil
            return
        }
        guard scanner.skipName() else { return nil }
        var dstOffset = standardOffset + 3600
        if !scanner.peek(UInt8(ascii: ",")) {
            guard let dst = scanner.offset() else { return nil }
            dstOffset = -dst
        }
        guard scanner.take(UInt8(ascii: ",")), let start = scanner.change(),
              scanner.take(UInt8(ascii: ",")), let end = scanner.change(), scanner.atEnd else { return nil }
        daylight = Daylight(offset: dstOffset, start: start, end: end)
    }

    /// The changes of offset in `year`: (UTC second, offset after it), in time order.
    func transitions(inYear year: Int) -> [(at: Int64, offset: Int64)] {
        guard let daylight else { return [] }
        let startDay = Self.daysSinceEpoch(daylight.start.day, year: year)
        let endDay = Self.daysSinceEpoch(daylight.end.day, year: year)
        // Each change is given in the local time in force before it.
        let start = startDay * 86_400 + daylight.start.time - standardOffset
        let end = endDay * 86_400 + daylight.end.time - daylight.offset
        return [(start, daylight.offset), (end, standardOffset)].sorted { $0.at < $1.at }
    }

    /// The offset at the start of `year` (before any of its changes).
    func offsetAtStart(ofYear year: Int) -> Int64 {
        guard let last = transitions(inYear: year - 1).last else { return standardOffset }
        return last.offset
    }

    private static func daysSinceEpoch(_ day: Day, year: Int) -> Int64 {
        let january1 = CivilDate(year: year, month: 1, day: 1)?.daysSinceEpoch ?? 0
        switch day {
        case .julian(let n):
            let leapShift: Int64 = CivilDate.isLeapYear(year) && n >= 60 ? 1 : 0
            return january1 + Int64(n - 1) + leapShift
        case .zeroBased(let n):
            return january1 + Int64(n)
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilDate(year: year, month: month, day: 1)?.daysSinceEpoch ?? january1
            // 1970-01-01 was a Thursday (4).
            let firstWeekday = Int((first % 7 + 7 + 4) % 7)
            var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = CivilDate.daysInMonth(month, year: year)
            while day > length { day -= 7 }
            return first + Int64(day - 1)
        }
    }

    /// A cursor over the bytes of a TZ string.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek(byte) else { return false }
            index += 1
            return true
        }

        /// A zone abbreviation: `<...>` or three or more letters.
        mutating func skipName() -> Bool {
            if take(UInt8(ascii: "<")) {
                while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
                return take(UInt8(ascii: ">"))
            }
            let start = index
            while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a"), (bytes[index] | 0x20) <= UInt8(ascii: "z") {
                index += 1
            }
            return index - start >= 3
        }

        mutating func number() -> Int? {
            var value = 0
            var digits = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]), digits < 9 {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
                digits += 1
            }
            return digits == 0 ? nil : value
        }

        /// `[+-]hh[:mm[:ss]]` in seconds (POSIX sign: positive is west of UTC).
        mutating func offset() -> Int64? {
            var sign: Int64 = 1
            if take(UInt8(ascii: "-")) { sign = -1 } else { _ = take(UInt8(ascii: "+")) }
            guard let hours = number(), hours <= 167 else { return nil }
            var seconds = Int64(hours) * 3600
            if take(UInt8(ascii: ":")) {
                guard let minutes = number(), minutes < 60 else { return nil }
                seconds += Int64(minutes) * 60
                if take(UInt8(ascii: ":")) {
                    guard let secs = number(), secs < 60 else { return nil }
                    seconds += Int64(secs)
                }
            }
            return sign * seconds
        }

        /// `Jn`, `n` or `Mm.w.d`, then an optional `/time` (default 02:00).
        mutating func change() -> Change? {
            let day: Day
            if take(UInt8(ascii: "M")) {
                guard let month = number(), (1...12).contains(month), take(UInt8(ascii: ".")),
                      let week = number(), (1...5).contains(week), take(UInt8(ascii: ".")),
                      let weekday = number(), (0...6).contains(weekday) else { return nil }
                day = .monthWeekDay(month: month, week: week, weekday: weekday)
            } else if take(UInt8(ascii: "J")) {
                guard let n = number(), (1...365).contains(n) else { return nil }
                day = .julian(n)
            } else {
                guard let n = number(), (0...365).contains(n) else { return nil }
                day = .zeroBased(n)
            }
            var time: Int64 = 7200
            if take(UInt8(ascii: "/")) {
                guard let value = offset() else { return nil }
                time = value
            }
            return Change(day: day, time: time)
        }
    }
}
