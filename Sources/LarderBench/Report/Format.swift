import Foundation

/// Number and text formatting for reports (and `larder stats`' counts).
public enum Format {
    /// `value` with exactly `digits` decimals.
    static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        return String(format: "%.\(digits)f", value)
    }

    /// `text` right-aligned in `width` columns.
    static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    /// `text` left-aligned in `width` columns.
    static func padRight(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// An integer with thousands separators: `52,341`.
    public static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, char) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(char)
        }
        return value < 0 ? "-" + out : out
    }

    /// A latency in microseconds as a short human value: `812µs`, `1.25ms`, `2.10s`.
    static func latency(_ microseconds: Double) -> String {
        if microseconds < 1000 { return fixed(microseconds, digits: microseconds < 10 ? 1 : 0) + "µs" }
        if microseconds < 1_000_000 { return fixed(microseconds / 1000, digits: 2) + "ms" }
        return fixed(microseconds / 1_000_000, digits: 2) + "s"
    }

    /// Seconds as `10s`, `1.5s`, `250ms`.
    static func seconds(_ seconds: Double) -> String {
        if seconds < 1 { return fixed(seconds * 1000, digits: 0) + "ms" }
        if seconds == seconds.rounded() { return fixed(seconds, digits: 0) + "s" }
        return fixed(seconds, digits: 2) + "s"
    }
}

extension Format {
    /// A rate or count without needless decimals: `1000`, `12.5`.
    static func compact(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : fixed(value, digits: 2)
    }
}
