/// The `grpc-timeout` header: ASCII digits and a unit (H M S m u n). gRPC's spec says at most 8
/// digits; up to `maxDigits` are taken, as gRPC C++ takes them (grpclib sends 9 for long timeouts).
public enum GRPCTimeout {
    /// The most digits taken: any more could overflow the sum before the unit's scale saturates it.
    public static let maxDigits = 18

    /// The timeout in nanoseconds (saturating at `UInt64.max`), or nil when malformed.
    public static func nanoseconds(_ value: some BidirectionalCollection<UInt8>) -> UInt64? {
        guard let unit = value.last, value.count >= 2, value.count <= maxDigits + 1 else { return nil }
        let scale: UInt64
        switch unit {
        case UInt8(ascii: "H"): scale = 3_600_000_000_000
        case UInt8(ascii: "M"): scale = 60_000_000_000
        case UInt8(ascii: "S"): scale = 1_000_000_000
        case UInt8(ascii: "m"): scale = 1_000_000
        case UInt8(ascii: "u"): scale = 1_000
        case UInt8(ascii: "n"): scale = 1
        default: return nil
        }
        var amount: UInt64 = 0
        for digit in value.dropLast() {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            amount = amount * 10 + UInt64(digit - UInt8(ascii: "0"))
        }
        let (product, overflow) = amount.multipliedReportingOverflow(by: scale)
        return overflow ? UInt64.max : product
    }

    /// The header value for a timeout: the finest unit that fits in 8 digits.
    public static func encode(nanoseconds: UInt64) -> String {
        let units: [(UInt64, Character)] = [
            (1, "n"), (1_000, "u"), (1_000_000, "m"), (1_000_000_000, "S"),
            (60_000_000_000, "M"), (3_600_000_000_000, "H"),
        ]
        for (scale, unit) in units {
            let amount = nanoseconds / scale + (nanoseconds % scale == 0 ? 0 : 1)
            if amount <= 99_999_999 { return "\(amount)\(unit)" }
        }
        return "99999999H"
    }
}
