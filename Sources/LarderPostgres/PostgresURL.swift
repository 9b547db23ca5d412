/// Recognizes PostgreSQL URLs and hides their passwords.
public enum PostgresURL {
    /// True for `postgres://…` and `postgresql://…` (the forms `--db` accepts).
    public static func isPostgres(_ value: String) -> Bool {
        value.hasPrefix("postgres://") || value.hasPrefix("postgresql://")
    }

    /// `url` with the password of its user info and of any `password=` parameter replaced by `***`.
    public static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.firstRange(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
               let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        var output = ""
        var rest = Substring(text)
        while let key = rest.firstRange(of: "password=") {
            output += rest[..<key.upperBound] + "***"
            rest = rest[key.upperBound...]
            rest = rest[(rest.firstIndex { $0 == "&" || $0 == " " } ?? rest.endIndex)...]
        }
        return output + rest
    }
}
