/// Durations as people type them: `2s`, `500ms`, `1m`, `1m30s`, `1.5s`, `1h`, or a bare number of seconds.
public enum DurationText {
    /// Parses `text`; nil when it is not a duration.
    public static func parse(_ text: String) -> Duration? {
        if let seconds = Double(text), seconds.isFinite, text.first?.isNumber == true || text.first == "." {
            return fromSeconds(seconds)
        }
        var rest = Substring(text)
        var total = 0.0
        var sawPart = false
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unit.count)
            guard let scale = units[String(unit)] else { return nil }
            total += value * scale
            sawPart = true
        }
        guard sawPart, total.isFinite else { return nil }
        return fromSeconds(total)
    }

    /// Parses a time flag's value: above 0 and at most one day.
    /// - Throws: a usage error naming `flag` and the accepted forms.
    static func parseTimeout(_ text: String, flag: String, usagePath: String) throws(CLIError) -> Duration {
        guard let duration = parse(text), duration > .zero, duration <= .seconds(86_400) else {
            throw .usage("\(flag) must be a duration above 0 and at most 24h, such as 2s, 500ms, 1m or 2.5 "
                         + "(seconds), got \"\(text)\"", command: usagePath)
        }
        return duration
    }

    private static let units: [String: Double] = [
        "ms": 0.001, "s": 1, "m": 60, "h": 3600,
    ]

    private static func fromSeconds(_ seconds: Double) -> Duration? {
        guard seconds >= 0, seconds <= 1e9 else { return nil }
        let nanoseconds = (seconds * 1e9).rounded()
        return .nanoseconds(Int64(nanoseconds))
    }
}
