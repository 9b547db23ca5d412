import LarderWire

/// `google.protobuf.FieldMask` in JSON: one string of comma-separated paths,
/// each in lowerCamelCase (`name,colorHex`); in the message they are
/// snake_case (`name`, `color_hex`).
enum FieldMaskPaths {
    /// `"name,colorHex"` for `["name", "color_hex"]`.
    static func json(_ paths: [String]) -> String {
        paths.map { path in path.split(separator: ".", omittingEmptySubsequences: false)
            .map { FieldDescriptor.jsonName(String($0)) }.joined(separator: ".") }
            .joined(separator: ",")
    }

    /// `["name", "color_hex"]` for `"name,colorHex"`; snake_case paths are accepted as they are.
    /// Returns nil for an empty path segment (`"a,,b"`, `"a."`).
    static func paths(_ json: String) -> [String]? {
        if json.isEmpty { return [] }
        var result: [String] = []
        for path in json.split(separator: ",", omittingEmptySubsequences: false) {
            var segments: [String] = []
            for segment in path.split(separator: ".", omittingEmptySubsequences: false) {
                guard !segment.isEmpty else { return nil }
                segments.append(FieldNames.snakeCase(String(segment)))
            }
            result.append(segments.joined(separator: "."))
        }
        return result
    }
}

/// Converting between .proto field names and their JSON spellings.
enum FieldNames {
    /// `colorHex` → `color_hex`.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}
