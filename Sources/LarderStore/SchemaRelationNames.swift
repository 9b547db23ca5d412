/// The tables and indexes a list of migrations creates, read from their DDL: what a database
/// that was never migrated must not hold already (another application's tables of our names).
public enum SchemaRelationNames {
    /// Each name once, in order: `CREATE TABLE name`, `CREATE [UNIQUE] INDEX name`, and the
    /// index behind `CONSTRAINT name PRIMARY KEY | UNIQUE`.
    public static func created(by migrations: [String]) -> [String] {
        var names: [String] = []
        for migration in migrations {
            let words = migration.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "(" || $0 == "," })
                .map(String.init)
            for index in words.indices {
                func word(_ offset: Int) -> String? { index + offset < words.count ? words[index + offset] : nil }
                if words[index] == "CREATE" {
                    var next = 1
                    if word(next) == "UNIQUE" { next += 1 }
                    guard word(next) == "TABLE" || word(next) == "INDEX" else { continue }
                    next += 1
                    if word(next) == "IF" && word(next + 1) == "NOT" && word(next + 2) == "EXISTS" { next += 3 }
                    if let name = word(next) { names.append(name) }
                } else if words[index] == "CONSTRAINT", let name = word(1), word(2) == "PRIMARY" || word(2) == "UNIQUE" {
                    names.append(name)
                }
            }
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// The tables and indexes that exist after `migrations` ran in order: each `CREATE` as
    /// `created(by:)` reads it, less what a later `DROP TABLE|INDEX [IF EXISTS] name` removed.
    public static func present(after migrations: [String]) -> Set<String> {
        var present = Set<String>()
        for migration in migrations {
            let words = migration.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "(" || $0 == "," || $0 == ";" })
                .map(String.init)
            for index in words.indices {
                func word(_ offset: Int) -> String? { index + offset < words.count ? words[index + offset] : nil }
                switch words[index] {
                case "CREATE", "CONSTRAINT":
                    // One statement's words, up to the next one, read as `created(by:)` does.
                    present.formUnion(created(by: [words[index..<min(words.count, index + 8)].joined(separator: " ")]))
                case "DROP":
                    guard word(1) == "TABLE" || word(1) == "INDEX" else { continue }
                    let next = word(2) == "IF" && word(3) == "EXISTS" ? 4 : 2
                    if let name = word(next) { present.remove(name) }
                default:
                    break
                }
            }
        }
        return present
    }
}
