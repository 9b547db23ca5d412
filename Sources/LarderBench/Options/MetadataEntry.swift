import LarderJSON
public import LarderWire

/// One `key: value` of call metadata (`--metadata`); keys are sent in lowercase.
public struct MetadataEntry: Sendable, Equatable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key.lowercased()
        self.value = value
    }

    /// Parses `--metadata`: a JSON object of strings (`{"x-tenant":"a"}`, as ghz), or `KEY: VALUE` / `KEY=VALUE`.
    /// - Throws: INVALID_ARGUMENT naming the text and the accepted forms.
    public static func parse(_ text: String) throws(RPCError) -> [MetadataEntry] {
        let forms = "expected '{\"key\": \"value\", ...}', 'key: value' or 'key=value'"
        let trimmed = text.trimmingCharacters(in: " ")
        if trimmed.hasPrefix("{") {
            let json: JSON
            do throws(RPCError) {
                json = try JSONParser.parse(trimmed)
            } catch {
                throw .invalidArgument("--metadata is not valid JSON (\(error.message)); \(forms)")
            }
            guard case .object(let members) = json else { throw .invalidArgument("--metadata: \(forms)") }
            return try members.map { member throws(RPCError) in
                guard let value = member.value.stringValue else {
                    throw .invalidArgument("--metadata: the value of \"\(member.key)\" must be a string")
                }
                return try checked(member.key, value)
            }
        }
        guard let separator = trimmed.firstIndex(where: { $0 == ":" || $0 == "=" }) else {
            throw .invalidArgument("--metadata \"\(text)\" has no ':' or '='; \(forms)")
        }
        let key = Substring(trimmed[..<separator]).trimmingCharacters(in: " ")
        let value = trimmed[trimmed.index(after: separator)...].trimmingCharacters(in: " ")
        return [try checked(key, value)]
    }

    private static func checked(_ key: String, _ value: String) throws(RPCError) -> MetadataEntry {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-_.")
        guard !key.isEmpty, key.lowercased().allSatisfy({ allowed.contains($0) }) else {
            throw .invalidArgument("--metadata key \"\(key)\" must be letters, digits, '-', '_' or '.'")
        }
        return MetadataEntry(key: key, value: value)
    }
}

extension String {
    func trimmingCharacters(in character: Character) -> String { Substring(self).trimmingCharacters(in: character) }
}
