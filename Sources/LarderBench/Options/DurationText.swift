import LarderWire

/// Parses durations written like `10s`, `500ms`, `2m`, `1.5s`, `250us`, `1h` (a bare number is seconds).
enum DurationText {
    /// The longest duration any bench flag takes: a day.
    static let maximumSeconds: Double = 24 * 3600

    /// Seconds in `text`.
    /// - Throws: INVALID_ARGUMENT naming `flag`, the text and the accepted units.
    static func seconds(_ text: String, flag: String) throws(RPCError) -> Double {
        let units: [(suffix: String, scale: Double)] = [
            ("ms", 0.001), ("us", 0.000_001), ("µs", 0.000_001), ("s", 1), ("m", 60), ("h", 3600),
        ]
        let trimmed = text.lowercased()
        var number = Substring(trimmed)
        var scale = 1.0
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            number = trimmed.dropLast(unit.suffix.count)
            scale = unit.scale
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite, value >= 0
        else {
            throw .invalidArgument(
                "\(flag): \"\(text)\" is not a duration; use a number with a unit, e.g. 10s, 500ms, 2m, 250us")
        }
        let seconds = value * scale
        guard seconds <= maximumSeconds else {
            throw .invalidArgument("\(flag): \"\(text)\" is longer than a day (24h), the most a bench run takes")
        }
        return seconds
    }
}
