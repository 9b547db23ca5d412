public import Foundation
public import LarderAPI
public import LarderWire

/// The user's time zone: how timestamps are shown and how local dates are read.
public struct LocalTime: Sendable {
    public let timeZone: TimeZone
    /// The IANA name `TZ` gave, when Foundation calls the zone otherwise (`UTC` is its `GMT`).
    private let givenName: String?

    public init(timeZone: TimeZone) { self.init(timeZone: timeZone, givenName: nil) }

    private init(timeZone: TimeZone, givenName: String?) {
        self.timeZone = timeZone
        self.givenName = givenName
    }

    /// The zone named by `TZ` in `environment` when it is valid, else the process's current zone.
    public init(environment: [String: String]) {
        if let value = environment["TZ"], let zone = Self.zone(tz: value) {
            let name = value.hasPrefix(":") ? String(value.dropFirst()) : value
            let named = Self.posixRule(name) == nil && TimeZone(identifier: name) != nil
            self.init(timeZone: zone, givenName: named ? name : nil)
        } else {
            self.init(timeZone: .current)
        }
    }

    /// The zone a `TZ` value names, as glibc reads it (an optional leading `:`): an IANA name
    /// (`Asia/Taipei`), a file of the zone database by its path (`/usr/share/zoneinfo/Asia/Tokyo`,
    /// or under `posix/`), or a POSIX rule without daylight time (`CST-8`, `<+0330>-3:30`); nil
    /// for anything else (a rule with daylight time, `right/` leap-second zones, a typo).
    static func zone(tz value: String, zoneDirectory: String = defaultZoneDirectory) -> TimeZone? {
        let name = value.hasPrefix(":") ? String(value.dropFirst()) : value
        guard !name.isEmpty else { return nil }
        // A POSIX rule first: Foundation reads `GMT+5` as 5 h east, glibc (and POSIX) as 5 h west.
        if let offset = posixRule(name, zoneDirectory: zoneDirectory) { return TimeZone(secondsFromGMT: offset) }
        if !name.hasPrefix("/"), let zone = TimeZone(identifier: name) { return zone }
        var relative = Substring(name)
        if name.hasPrefix("/") {
            let directory = URL(fileURLWithPath: zoneDirectory).resolvingSymlinksInPath().path + "/"
            let path = URL(fileURLWithPath: name).resolvingSymlinksInPath().path
            guard path.hasPrefix(directory) else { return nil }
            relative = path.dropFirst(directory.count)
        }
        if relative.hasPrefix("posix/") { relative = relative.dropFirst("posix/".count) }
        if relative != Substring(name), !relative.isEmpty, !relative.hasPrefix("right/"),
           let zone = TimeZone(identifier: String(relative)) {
            return zone
        }
        return fixedRule(name).flatMap { TimeZone(secondsFromGMT: $0) }
    }

    /// The offset east of UTC of `name` read as a POSIX rule without daylight time (`fixedRule`),
    /// when no zone file has that name (glibc looks for a file first: `GMT0`, `EST5EDT` are files).
    static func posixRule(_ name: String, zoneDirectory: String = defaultZoneDirectory) -> Int? {
        guard !name.hasPrefix("/"), let offset = fixedRule(name),
              !FileManager.default.fileExists(atPath: zoneDirectory + "/" + name) else { return nil }
        return offset
    }

    /// Where glibc looks for zone files: `TZDIR`, else /usr/share/zoneinfo.
    static var defaultZoneDirectory: String { ProcessInfo.processInfo.environment["TZDIR"] ?? "/usr/share/zoneinfo" }

    /// The offset east of UTC, in seconds, of a POSIX `TZ` rule with no daylight time: a name
    /// of 3+ letters or `<…>`, then an offset west of UTC, `[+-]hh[:mm[:ss]]`; nil otherwise.
    static func fixedRule(_ rule: String) -> Int? {
        var rest = Substring(rule)
        if rest.first == "<" {
            guard let close = rest.firstIndex(of: ">"), rest.distance(from: rest.startIndex, to: close) >= 4 else {
                return nil
            }
            rest = rest[rest.index(after: close)...]
        } else {
            let letters = rest.prefix { $0.isASCII && $0.isLetter }
            guard letters.count >= 3 else { return nil }
            rest = rest.dropFirst(letters.count)
        }
        var sign = 1
        if let first = rest.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0
        for (index, part) in parts.enumerated() {
            guard (1...2).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(part),
                  index == 0 ? value <= 24 : value <= 59
            else { return nil }
            seconds += value * [3600, 60, 1][index]
        }
        return -sign * seconds  // POSIX offsets are west of UTC
    }

    /// The warning for a `TZ` in `environment` that names no zone this machine knows (a POSIX
    /// rule with daylight time, a typo): `init(environment:)` then falls back to the process's
    /// zone, which the user did not ask for. Nil when `TZ` is unset, empty or known.
    public static func unknownZoneWarning(environment: [String: String]) -> String? {
        guard let name = environment["TZ"], !name.isEmpty, zone(tz: name) == nil else { return nil }
        let fallback = TimeZone.current.identifier
        return "larder: warning: TZ=\(SafeText.quoted(name)) is not a time zone this machine knows (use an IANA "
            + "name such as Asia/Taipei); times are shown, dates YYYY-MM-DD read and summary days counted in "
            + "\(fallback)\n"
    }

    /// The zone's name in the tz database, for a server to follow its offset changes: its
    /// identifier when that is a zone file of this machine's tzdata (`Europe/Paris`, `UTC`, and
    /// the names without a `/` such as `CET` or `EST5EDT`); nil for a zone Foundation knows only
    /// as a fixed offset (`GMT+0800`).
    public var tzdataName: String? {
        let name = givenName ?? timeZone.identifier
        if name.contains("/") || name == "UTC" { return name }
        guard !name.isEmpty, !name.hasPrefix("."), name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "+" })
        else { return nil }
        let directory = ProcessInfo.processInfo.environment["TZDIR"] ?? "/usr/share/zoneinfo"
        return FileManager.default.fileExists(atPath: directory + "/" + name) ? name : nil
    }

    /// The zone's offset from UTC at `timestamp`, in whole minutes (see `offsetSeconds(at:)`).
    public func offset(at timestamp: Timestamp) -> UTCOffset {
        UTCOffset(seconds: offsetSeconds(at: timestamp.seconds))
    }

    /// The zone's exact offset from UTC at `second`, in seconds: a local mean time has seconds
    /// (Africa/Monrovia was -00:44:30 until 1972), as the server's tzdata does.
    public func offsetSeconds(at second: Int64) -> Int {
        timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(second)))
    }

    /// The zone's offset now.
    public func currentOffset() -> UTCOffset {
        UTCOffset(seconds: timeZone.secondsFromGMT(for: Date()))
    }

    /// `timestamp` as RFC 3339 in this zone, e.g. `2026-11-30T08:00:00+08:00`; in UTC (`Z`) when
    /// RFC 3339 cannot write its local time, so that every time shown can be pasted back: an
    /// offset with seconds (a local mean time, `-00:44:30`) or a local year outside 0001-9999.
    public func format(_ timestamp: Timestamp) -> String {
        let seconds = offsetSeconds(at: timestamp.seconds)
        let (local, overflow) = timestamp.seconds.addingReportingOverflow(Int64(seconds))
        guard seconds % 60 == 0, !overflow, TimestampRange.seconds.contains(local) else { return timestamp.rfc3339() }
        return timestamp.rfc3339(offsetMinutes: seconds / 60, useZ: false)
    }

    /// Reads an RFC 3339 time with a year 0001-9999, as `larder call`'s JSON does (a space may
    /// stand for `T` here), or a date `YYYY-MM-DD` meaning the day's first instant in this zone:
    /// local midnight, or the end of the clock change on a day whose midnight is skipped
    /// (America/Santiago on 2026-09-06 starts at 01:00 -03:00). The result may still fall outside
    /// `TimestampRange` once the offset is applied (`0001-01-01T00:00:00+00:01`).
    public func parse(_ text: String) throws(RFC3339.ParseError) -> Timestamp {
        guard let date = CivilDate(parsing: text) else {
            let (seconds, nanos) = try RFC3339.parse(text, allowingSpace: true, years: TimestampRange.years)
            return Timestamp(seconds: seconds, nanos: nanos)
        }
        return Timestamp(seconds: firstInstant(ofLocalDay: date.daysSinceEpoch * 86_400))
    }

    /// The first second whose local time is `midnight` (seconds of the local wall clock since
    /// 1970-01-01T00:00) or later.
    private func firstInstant(ofLocalDay midnight: Int64) -> Int64 {
        func offsetSeconds(_ instant: Int64) -> Int64 { Int64(self.offsetSeconds(at: instant)) }
        // The zone's offsets around that day: a change near midnight has one on each side.
        let offsets = Set([midnight - 86_400, midnight, midnight + 86_400].map(offsetSeconds))
        // Midnight exists with offset o when the offset at midnight - o is o; the earliest when
        // a clock set back at midnight repeats it.
        let exact = offsets.map { midnight - $0 }.filter { offsetSeconds($0) == midnight - $0 }
        if let first = exact.min() { return first }
        // Skipped: the day starts at the change, the first instant whose local time is past
        // midnight, between midnight at the latest offset and at the earliest.
        var before = midnight - (offsets.max() ?? 0)  // local time before midnight
        var after = midnight - (offsets.min() ?? 0)  // local time midnight or later
        while after - before > 1 {
            let middle = before + (after - before) / 2
            if middle + offsetSeconds(middle) >= midnight { after = middle } else { before = middle }
        }
        return after
    }
}
