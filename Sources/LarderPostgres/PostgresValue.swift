/// A statement parameter, sent in PostgreSQL's text format.
public enum PostgresValue: Hashable, Sendable {
    case text(String)
    case int64(Int64)

    /// Appends the value's text and a NUL terminator to `bytes`.
    func appendText(to bytes: inout [UInt8]) {
        switch self {
        case .text(let string):
            bytes.append(contentsOf: string.utf8)
        case .int64(let value):
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            let start = bytes.count
            var magnitude = value.magnitude
            repeat {
                bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            bytes[start...].reverse()
        }
        bytes.append(0)
    }
}
