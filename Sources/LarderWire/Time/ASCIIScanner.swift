/// A cursor over the UTF-8 bytes of a date or time; only ASCII matches, so
/// other digits (`２０２６`) are refused.
struct ASCIIScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    var atEnd: Bool { index == bytes.count }

    /// Consumes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Consumes one of `choices` when it is next.
    mutating func take(anyOf choices: String) -> Bool {
        guard index < bytes.count, choices.utf8.contains(bytes[index]) else { return false }
        index += 1
        return true
    }

    /// Consumes one ASCII digit.
    mutating func digit() -> Int? {
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
        defer { index += 1 }
        return Int(bytes[index] - UInt8(ascii: "0"))
    }

    /// Consumes exactly `count` digits as one number.
    mutating func digits(_ count: Int) -> Int? {
        var value = 0
        for _ in 0..<count {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    /// `+1` or `-1` for a consumed sign.
    mutating func sign() -> Int? {
        if take(UInt8(ascii: "+")) { return 1 }
        if take(UInt8(ascii: "-")) { return -1 }
        return nil
    }

    /// Consumes `YYYY-MM-DD`, not yet checked to be a real date.
    mutating func dateFields() -> (year: Int, month: Int, day: Int)? {
        guard let year = digits(4), take(UInt8(ascii: "-")), let month = digits(2), take(UInt8(ascii: "-")),
              let day = digits(2)
        else { return nil }
        return (year, month, day)
    }
}
