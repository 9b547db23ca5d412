/// A JSON value with ordered object members and numbers kept as their exact
/// decimal text, so 64-bit integers and key order survive a round trip.
public indirect enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number as JSON text, e.g. `-12`, `3.5e-3`; never NaN or infinite.
    case number(String)
    case string(String)
    case array([JSON])
    case object([Member])

    /// One `"key": value` pair of an object.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSON
        public init(_ key: String, _ value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// An integer as a JSON number.
    public static func integer<I: BinaryInteger>(_ value: I) -> JSON { .number(String(value)) }

    /// The value of the first member called `key` of an object.
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The elements of an array, or nil.
    public var arrayValue: [JSON]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The text of a string, or nil.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The kind of value, as used in error messages: `null`, `boolean`, `number`, `string`, `array`, `object`.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
