/// Server messages name proto fields (`location.color_hex must be #RRGGBB`); the CLI shows
/// the flag the user typed instead (`--color must be #RRGGBB`).
enum FieldFlagNames {
    /// `message` with every field path of `fields` (outside double-quoted text) replaced by its flag.
    /// Longer paths are tried first, so `meal_record.eaten_at` wins over `eaten_at`.
    static func rewrite(_ message: String, _ fields: [String: String]) -> String {
        let paths = fields.keys.sorted { $0.count > $1.count }
        var output = ""
        var rest = Substring(message)
        var quoted = false
        var previous: Character?
        while let first = rest.first {
            if first == "\"" && previous != "\\" {
                quoted.toggle()
            } else if !quoted, !(previous.map(isPathCharacter) ?? false),
                      let path = paths.first(where: { matches(rest, $0) }), let flag = fields[path] {
                output += flag
                rest = rest.dropFirst(path.count)
                previous = flag.last
                continue
            }
            output.append(first)
            previous = first
            rest = rest.dropFirst()
        }
        return output
    }

    /// Whether `text` starts with the whole path `path` (not a longer identifier).
    private static func matches(_ text: Substring, _ path: String) -> Bool {
        guard text.hasPrefix(path) else { return false }
        let after = text.dropFirst(path.count)
        guard let next = after.first, isPathCharacter(next) else { return true }
        // A full stop ending the sentence is no part of the path.
        return next == "." && !(after.dropFirst().first.map(isPathCharacter) ?? false)
    }

    private static func isPathCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == ".")
    }
}
