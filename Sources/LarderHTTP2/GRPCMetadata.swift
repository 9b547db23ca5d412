import LarderWire

/// Custom metadata of a call: header fields other than the reserved ones, in the order sent.
/// Keys ending in `-bin` carry bytes (base64 on the wire), the others text.
public struct GRPCMetadata: Hashable, Sendable, ExpressibleByArrayLiteral {
    /// A metadata value.
    public enum Value: Hashable, Sendable {
        case text(String)
        case binary([UInt8])
    }

    /// One entry; `name` is lower-case.
    public struct Entry: Hashable, Sendable {
        public var name: String
        public var value: Value

        public init(_ name: String, _ value: Value) {
            self.name = name.lowercased()
            self.value = value
        }

        /// An entry whose name is known to be lower-case already (HTTP/2 field names are).
        init(lowercaseName name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry] = []) { self.entries = entries }

    public init(arrayLiteral elements: Entry...) { entries = elements }

    /// The first value under `name`.
    public subscript(name: String) -> Value? {
        entries.first { $0.name == name }?.value
    }

    /// The first text value under `name`.
    public func text(_ name: String) -> String? {
        if case .text(let value) = self[name] { return value }
        return nil
    }

    /// The first binary value under `name`.
    public func binary(_ name: String) -> [UInt8]? {
        if case .binary(let value) = self[name] { return value }
        return nil
    }

    /// Adds an entry.
    public mutating func append(_ name: String, _ value: Value) { entries.append(Entry(name, value)) }

    /// Adds an entry, lower-casing `name` only when it is not known to be lower-case already.
    mutating func append(lowercase name: String, isLowercase: Bool, _ value: Value) {
        entries.append(isLowercase ? Entry(lowercaseName: name, value) : Entry(name, value))
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The entries as header fields: binary values base64 (unpadded) under a `-bin` name.
    var headerFields: [HTTP2HeaderField] {
        entries.map { entry in
            switch entry.value {
            case .text(let text): HTTP2HeaderField(entry.name, text)
            case .binary(let bytes):
                HTTP2HeaderField(entry.name.hasSuffix("-bin") ? entry.name : entry.name + "-bin", Base64.encode(bytes, alphabet: .standard, padded: false))
            }
        }
    }
}
