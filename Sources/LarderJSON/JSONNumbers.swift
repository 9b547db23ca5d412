import LarderWire

/// Reading protobuf numbers from JSON: numbers or strings holding numbers,
/// exact for 64-bit integers, as the proto3 JSON mapping allows.
enum JSONNumbers {
    /// An integer of type `T` from a JSON number or a string holding one
    /// (`12`, `"12"`, `1e3`, `"-5"`); fractions and out-of-range values are errors.
    static func integer<T: FixedWidthInteger>(_ json: JSON, _ type: T.Type, typeName: String, path: FieldPath)
        throws(RPCError) -> T
    {
        let text: String
        switch json {
        case .number(let number): text = number
        case .string(let string): text = string
        default: throw ProtoJSON.typeError(path, expected: "an integer (\(typeName))", got: json)
        }
        guard isNumberText(text) else {
            throw RPCError.invalidArgument("\(path.description): \"\(text)\" is not an integer (\(typeName))")
        }
        if let value = T(text) { return value }
        if text.allSatisfy({ $0.isNumber || $0 == "-" }) {
            throw RPCError.invalidArgument("\(path.description): \(text) is out of range for \(typeName)")
        }
        guard let double = Double(text), double.isFinite, double.rounded() == double else {
            throw RPCError.invalidArgument("\(path.description): \(text) is not an integer (\(typeName))")
        }
        guard let value = T(exactly: double) else {
            throw RPCError.invalidArgument("\(path.description): \(text) is out of range for \(typeName)")
        }
        return value
    }

    /// A double from a JSON number, or a string holding a number, `NaN`, `Infinity` or `-Infinity`.
    static func double(_ json: JSON, typeName: String, path: FieldPath) throws(RPCError) -> Double {
        switch json {
        case .number(let text):
            guard let value = Double(text), value.isFinite else {
                throw RPCError.invalidArgument("\(path.description): \(text) is out of range for \(typeName)")
            }
            return value
        case .string(let text):
            switch text {
            case "NaN": return .nan
            case "Infinity": return .infinity
            case "-Infinity": return -.infinity
            default:
                guard isNumberText(text), let value = Double(text), value.isFinite else {
                    throw RPCError.invalidArgument("\(path.description): \"\(text)\" is not a number (\(typeName))")
                }
                return value
            }
        default:
            throw ProtoJSON.typeError(path, expected: "a number (\(typeName))", got: json)
        }
    }

    /// A float: a double within float's range (NaN and infinities allowed).
    static func float(_ json: JSON, path: FieldPath) throws(RPCError) -> Float {
        let value = try double(json, typeName: "float", path: path)
        if value.isFinite && abs(value) > Double(Float.greatestFiniteMagnitude) {
            throw RPCError.invalidArgument("\(path.description): \(value) is out of range for float")
        }
        return Float(value)
    }

    /// JSON number text for a double or float; NaN and infinities as the mapping's strings.
    static func json<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> JSON {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .number(value.description)
    }

    /// True when `text` follows the JSON number grammar.
    static func isNumberText(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            var count = 0
            while let byte = bytes.first, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                bytes = bytes.dropFirst()
                count += 1
            }
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if digits() == 0 {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            if digits() == 0 { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            if digits() == 0 { return false }
        }
        return bytes.isEmpty
    }
}
