/// Strict UTF-8 validation: `larder` refuses text it would otherwise have to alter.
///
/// Swift's `CommandLine.arguments` and `String(decoding:)` replace invalid bytes with U+FFFD;
/// these checks run on the raw bytes first, so a mistyped byte is an error, never a changed name.
public enum UTF8Check {
    /// The offset of the first byte that is not part of valid UTF-8; nil when all of `bytes` is valid.
    public static func firstInvalidOffset(_ bytes: some Collection<UInt8>) -> Int? {
        let bytes = Array(bytes)
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            // The length of the sequence, and the range its second byte must fall in (RFC 3629).
            let length: Int
            let second: ClosedRange<UInt8>
            switch lead {
            case 0x00...0x7F:
                index += 1
                continue
            case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return index
            }
            guard index + length <= bytes.count, second.contains(bytes[index + 1]) else { return index }
            for next in (index + 2)..<(index + length) where !(0x80...0xBF).contains(bytes[next]) { return index }
            index += length
        }
        return nil
    }

    /// The arguments as Strings, or the index and byte offset of the first one that is not valid UTF-8.
    public static func decode(_ arguments: [[UInt8]]) -> Result<[String], InvalidArgument> {
        var strings: [String] = []
        for (index, bytes) in arguments.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                let offset = firstInvalidOffset(bytes) ?? 0
                return .failure(InvalidArgument(index: index, offset: offset, byte: bytes[min(offset, bytes.count - 1)]))
            }
            strings.append(text)
        }
        return .success(strings)
    }

    /// The environment from raw `NAME=value` entries (other variables' invalid bytes become
    /// U+FFFD, as Foundation decodes them), or the first of `checked` whose value is not valid
    /// UTF-8: the settings larder reads are checked as its arguments are.
    public static func decodeEnvironment(_ entries: [[UInt8]],
                                         checking checked: Set<String>) -> Result<[String: String], InvalidVariable> {
        var environment: [String: String] = [:]
        for entry in entries {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: entry[..<equals], as: UTF8.self)
            let value = entry[(equals + 1)...]
            if checked.contains(name), let offset = firstInvalidOffset(value) {
                return .failure(InvalidVariable(name: name, offset: offset, byte: value[value.startIndex + offset]))
            }
            if environment[name] == nil { environment[name] = String(decoding: value, as: UTF8.self) }
        }
        return .success(environment)
    }

    /// An environment variable larder reads whose value is not valid UTF-8.
    public struct InvalidVariable: Error, Equatable, Sendable {
        public let name: String
        /// The offset of the first invalid byte in the value.
        public let offset: Int
        public let byte: UInt8
    }

    /// An argument that is not valid UTF-8.
    public struct InvalidArgument: Error, Equatable, Sendable {
        /// Its index among the arguments after the program name.
        public let index: Int
        public let offset: Int
        public let byte: UInt8
    }
}
