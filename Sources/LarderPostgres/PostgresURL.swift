import CLibPQ

/// Recognizes PostgreSQL URLs and hides their passwords.
public enum PostgresURL {
    /// True for `postgres://…` and `postgresql://…`, the scheme in any case (the forms `--db` accepts).
    public static func isPostgres(_ value: String) -> Bool {
        let scheme = value.prefix { $0 != ":" }.lowercased()
        return (scheme == "postgres" || scheme == "postgresql") && value.dropFirst(scheme.count).hasPrefix("://")
    }

    /// Why `value`, which is not a PostgreSQL URL, is not a SQLite path either, or nil when
    /// it may be one: a URL of another scheme, or a libpq `key=value` connection string
    /// (which would otherwise become the name of a new SQLite file, each replica its own).
    public static func misreadDatabase(_ value: String) -> String? {
        guard !isPostgres(value) else { return nil }
        if let scheme = value.firstRange(of: "://"),
           value[..<scheme.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
           !value[..<scheme.lowerBound].isEmpty {
            return "a URL whose scheme is \"\(value[..<scheme.lowerBound])\"; PostgreSQL URLs start postgres:// "
                + "or postgresql://, and anything else is a SQLite file path"
        }
        let keys = ["host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service"]
        let words = value.split(whereSeparator: \.isWhitespace)
        if words.contains(where: { word in keys.contains { word.hasPrefix($0 + "=") } }) {
            return "a libpq key=value connection string, which larder-server does not take: write it as a URL, "
                + "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]"
        }
        return nil
    }

    /// Why libpq would refuse `url` before trying to connect (malformed, an unknown parameter, a
    /// port that is not a number in 1–65535, an unknown `sslmode` or `target_session_attrs`), or
    /// nil: a configuration error to report as one at start, not as an unreachable server.
    public static func problem(_ url: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(normalized(url), &error) else {
            defer { if let error { PQfreemem(error) } }
            let text = error.map { String(cString: $0) } ?? "not a valid connection URL"
            return scrubbed(String(text.reversed().drop(while: \.isWhitespace).reversed()), url: url)
        }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            defer { option += 1 }
            guard let rawValue = option.pointee.val else { continue }
            let name = String(cString: keyword), value = String(cString: rawValue)
            switch name {
            case "port":
                for port in value.split(separator: ",", omittingEmptySubsequences: false) where !port.isEmpty {
                    guard let number = Int(port), (1...65535).contains(number) else {
                        return "port \"\(port)\" is not a number in 1-65535"
                    }
                }
            case "sslmode" where !["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(value):
                return "sslmode \"\(value)\" is not one of disable, allow, prefer, require, verify-ca, verify-full"
            case "target_session_attrs"
                where !["any", "read-write", "read-only", "primary", "standby", "prefer-standby"].contains(value):
                return "target_session_attrs \"\(value)\" is not one of any, read-write, read-only, primary, "
                    + "standby, prefer-standby"
            default:
                break
            }
        }
        return nil
    }

    /// `url` with its scheme in lower case, the only case libpq knows (`--db` takes it in any case),
    /// or `url` unchanged when it is not a PostgreSQL URL.
    public static func normalized(_ url: String) -> String {
        guard isPostgres(url), let scheme = url.firstRange(of: "://") else { return url }
        return url[..<scheme.lowerBound].lowercased() + url[scheme.lowerBound...]
    }

    /// `text` (a message of libpq's, which may quote the connection string it was given) with
    /// every password `url` holds replaced by `***`, as well as what `redacted` hides.
    public static func scrubbed(_ text: String, url: String) -> String {
        var output = redacted(text)
        for password in passwords(in: url) where !password.isEmpty {
            output = output.replacing(password, with: "***")
        }
        return output
    }

    /// The password of `url`'s user info and of its `password=` parameters, as written.
    private static func passwords(in url: String) -> [String] {
        passwordRanges(in: url).map { String(url[$0]) }
    }

    /// `url` with the password of its user info and of any `password=` parameter replaced by `***`.
    public static func redacted(_ url: String) -> String {
        var text = url
        for range in passwordRanges(in: url).reversed() { text.replaceSubrange(range, with: "***") }
        return text
    }

    /// Where `text` holds passwords, in order, not overlapping: the one in the user info of a
    /// URL (`scheme://user:PASSWORD@host`) and the value of each `password=` parameter.
    private static func passwordRanges(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var searchFrom = text.startIndex
        if let scheme = text.firstRange(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
               let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
                ranges.append(text.index(after: colon)..<at)
                searchFrom = at
            }
        }
        var rest = text[searchFrom...]
        while let key = rest.firstRange(of: "password=") {
            let end = rest[key.upperBound...].firstIndex { $0 == "&" || $0 == " " } ?? rest.endIndex
            ranges.append(key.upperBound..<end)
            rest = rest[end...]
        }
        return ranges
    }
}
