import LarderAPI
import LarderWire

/// The field rules shared by every operation. Each check returns the
/// normalized value or throws INVALID_ARGUMENT naming the field.
enum Validation {
    static let maxNameLength = 100
    /// A name's cap in UTF-8 bytes: 4 per character (any character of 100 in the
    /// basic multilingual plane or beyond), so that a grapheme made of thousands of
    /// combining marks cannot pass as one character.
    static let maxNameBytes = 400
    /// A name's cap in UTF-8 bytes as sent, before it is trimmed: 4 × `maxNameBytes`. Trimming,
    /// the control-character check and counting characters each walk the whole value, on the
    /// one writer thread (a 4 MiB name of U+3000 around one letter took it 0.12 s); a value over
    /// this is refused on its length alone, before any of them.
    static let maxRawNameBytes = 4 * maxNameBytes
    static let maxIconLength = 100
    static let maxCalories: Int32 = 100_000

    /// A name trimmed of whitespace and newlines: 1-100 characters and at most 400
    /// UTF-8 bytes, no control characters; at most 1600 bytes before trimming.
    static func name(_ raw: String, field: String) throws(RPCError) -> String {
        let rawBytes = raw.utf8.count  // O(1) for the native strings decoding makes
        guard rawBytes <= maxRawNameBytes else {
            throw RPCError.invalidArgument("\(field) is \(rawBytes) bytes of UTF-8, more than the \(maxRawNameBytes) "
                + "a name may have before trimming (at most \(maxNameBytes) after)")
        }
        if let ascii = asciiName(raw) {
            switch ascii {
            case .valid(let count):
                guard count <= maxNameLength else {
                    throw RPCError.invalidArgument(
                        "\(field) must be at most \(maxNameLength) characters after trimming, got \(count)")
                }
                return raw
            case .empty: throw blankName(field)
            case .control: throw RPCError.invalidArgument("\(field) must not contain control characters")
            case .needsTrim: break
            }
        }
        guard let trimmed = raw.trimmedOfWhiteSpace else { throw blankName(field) }
        let bytes = trimmed.utf8.count
        guard bytes <= maxNameBytes else {
            throw RPCError.invalidArgument(
                "\(field) must be at most \(maxNameBytes) bytes of UTF-8 after trimming, got \(bytes)")
        }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw RPCError.invalidArgument("\(field) must not contain control characters")
        }
        let count = trimmed.count
        guard count <= maxNameLength else {
            throw RPCError.invalidArgument(
                "\(field) must be at most \(maxNameLength) characters after trimming, got \(count)")
        }
        return trimmed
    }

    private enum ASCIIName {
        case valid(count: Int), empty, control, needsTrim
    }

    /// The quick verdict on a printable-ASCII name without surrounding spaces;
    /// nil when it holds other characters and needs the full Unicode rules.
    private static func asciiName(_ raw: String) -> ASCIIName? {
        var raw = raw
        return raw.withUTF8 { utf8 -> ASCIIName? in
            guard let first = utf8.first, let last = utf8.last else { return .empty }
            var control = false
            for byte in utf8 {
                if byte >= 0x80 { return nil }
                if byte < 0x20 || byte == 0x7F { control = true }
            }
            if first == 0x20 || last == 0x20 || first < 0x20 || last < 0x20 { return .needsTrim }
            return control ? .control : .valid(count: utf8.count)
        }
    }

    /// `#RRGGBB` in any case, returned upper case.
    static func colorHex(_ raw: String, field: String) throws(RPCError) -> String {
        let utf8 = raw.utf8
        guard utf8.count == 7, utf8.first == UInt8(ascii: "#"), utf8.dropFirst().allSatisfy(isHexDigit) else {
            throw RPCError.invalidArgument("\(field) must be #RRGGBB, got \(SafeText.quoted(raw))")
        }
        return raw.uppercased()
    }

    /// 1-100 characters of `[A-Za-z0-9.]`.
    static func iconName(_ raw: String, field: String) throws(RPCError) -> String {
        let utf8 = raw.utf8
        guard (1...maxIconLength).contains(utf8.count), utf8.allSatisfy(isIconCharacter) else {
            throw RPCError.invalidArgument(
                "\(field) must be 1-\(maxIconLength) characters of A-Z, a-z, 0-9 and \".\", got \(SafeText.quoted(raw))")
        }
        return raw
    }

    /// A name that is missing, empty or only whitespace (proto3 cannot tell the three apart,
    /// and a user who typed `--name ""` did give one).
    private static func blankName(_ field: String) -> RPCError {
        RPCError.invalidArgument("\(field) is required: it must not be empty or only whitespace")
    }

    /// The id selecting an existing entity: required, a UUID; returned lower case.
    static func id(_ raw: String, field: String) throws(RPCError) -> String {
        guard !raw.isEmpty else { throw RPCError.invalidArgument("\(field) is required") }
        guard let id = StoreID.normalized(raw) else {
            throw RPCError.invalidArgument("\(field) must be a UUID, got \(SafeText.quoted(raw))")
        }
        return id
    }

    /// The id of a new entity: generated when empty, else a UUID returned lower case.
    static func newID(_ raw: String, field: String) throws(RPCError) -> String {
        raw.isEmpty ? StoreID.generate() : try id(raw, field: field)
    }

    /// A valid timestamp (year 1-9999, nanos 0-999999999), as the store keys it.
    static func instant(_ time: Timestamp, field: String) throws(RPCError) -> StoreInstant {
        StoreInstant(try storedTime(time, field: field))
    }

    /// The exclusive end of a range: a valid timestamp, or 10000-01-01T00:00:00Z (seconds
    /// 253402300800, nanos 0), one past the last valid instant, so that a range can include
    /// 9999-12-31T23:59:59.999999999Z.
    static func endInstant(_ time: Timestamp, field: String) throws(RPCError) -> StoreInstant {
        if time.seconds == TimestampRange.maxSeconds + 1 && time.nanos == 0 { return StoreInstant(time) }
        return try instant(time, field: field)
    }

    /// A valid timestamp (year 1-9999, nanos 0-999999999), kept to the nanosecond.
    static func storedTime(_ time: Timestamp, field: String) throws(RPCError) -> Timestamp {
        guard (0...999_999_999).contains(time.nanos) else {
            throw RPCError.invalidArgument("\(field) has nanos \(time.nanos); must be 0-999999999")
        }
        guard TimestampRange.seconds.contains(time.seconds) else {
            throw RPCError.invalidArgument(
                "\(field) is outside years 1-9999 (seconds \(time.seconds))")
        }
        return time
    }

    /// Calories in 0-100000.
    static func calories(_ value: Int32, field: String) throws(RPCError) -> Int32 {
        guard (0...maxCalories).contains(value) else {
            throw RPCError.invalidArgument("\(field) must be between 0 and \(maxCalories), got \(value)")
        }
        return value
    }

    /// A meal category other than UNSPECIFIED.
    static func mealCategory(_ value: MealCategory, field: String) throws(RPCError) -> MealCategory {
        guard value != .unspecified else {
            throw RPCError.invalidArgument(
                "\(field) is required: one of BREAKFAST, LUNCH, DINNER, SNACK (not UNSPECIFIED)")
        }
        return try knownMealCategory(value, field: field)
    }

    /// A meal category this build knows (UNSPECIFIED included): enums decode open, so a number
    /// from a newer client arrives as `.unrecognized` and is refused here, naming the field.
    static func knownMealCategory(_ value: MealCategory, field: String) throws(RPCError) -> MealCategory {
        if case .unrecognized(let number) = value {
            throw RPCError.invalidArgument("\(field): unknown MealCategory value \(number)")
        }
        return value
    }

    private static func isHexDigit(_ char: UInt8) -> Bool {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    private static func isIconCharacter(_ char: UInt8) -> Bool {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "."): true
        default: false
        }
    }
}
