import LarderWire

/// An offset from UTC such as `+08:00`, in whole minutes (-14:00 to +14:00).
public struct UTCOffset: Hashable, Sendable, CustomStringConvertible {
    public let minutes: Int

    public static let utc = UTCOffset(unchecked: 0)
    public static let range = -840...840

    /// - Returns: nil when `minutes` is outside ±14:00.
    public init?(minutes: Int) {
        guard Self.range.contains(minutes) else { return nil }
        self.minutes = minutes
    }

    private init(unchecked minutes: Int) { self.minutes = minutes }

    /// The offset of a time zone in seconds, rounded to whole minutes and clamped to ±14:00.
    public init(seconds: Int) {
        self.init(unchecked: min(max((seconds / 60), Self.range.lowerBound), Self.range.upperBound))
    }

    /// Parses `Z`, `UTC`, `+08:00`, `-0530`, `+8`.
    public init?(parsing text: String) {
        if text == "Z" || text == "z" || text.uppercased() == "UTC" {
            self.init(unchecked: 0)
            return
        }
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let body = Array(text.dropFirst())
        guard body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ":") }) else { return nil }
        let hoursText: [Character]
        let minutesText: [Character]
        switch body.count {
        case 1...2 where !body.contains(":"):  // +8, +08
            hoursText = body
            minutesText = ["0"]
        case 4 where !body.contains(":"):  // +0800
            hoursText = Array(body[0..<2])
            minutesText = Array(body[2..<4])
        case 5 where body[2] == ":":  // +08:00
            hoursText = Array(body[0..<2])
            minutesText = Array(body[3..<5])
        default:
            return nil
        }
        guard !hoursText.contains(":"), !minutesText.contains(":"),
              let hours = Int(String(hoursText)), let minutes = Int(String(minutesText)),
              hours <= 14, minutes < 60
        else { return nil }
        self.init(minutes: (sign == "-" ? -1 : 1) * (hours * 60 + minutes))
    }

    /// `+08:00`, `-05:30`, `+00:00`.
    public var description: String { RFC3339.formatOffset(minutes: minutes) }
}
