/// The tables and indexes a list of migrations creates and drops, read from their DDL: what a
/// database that was never migrated must not hold already (another application's tables of our
/// names), and what a migrated one must hold.
public enum SchemaRelationNames {
    /// Each name once, in order: `CREATE TABLE name`, `CREATE [UNIQUE] INDEX name`, and the
    /// index behind `CONSTRAINT name PRIMARY KEY | UNIQUE` (`IF NOT EXISTS` skipped).
    public static func created(by migrations: [String]) -> [String] {
        var seen = Set<String>()
        return changes(in: migrations).compactMap { change in
            guard case .created(let name) = change, seen.insert(name).inserted else { return nil }
            return name
        }
    }

    /// The tables and indexes that exist after `migrations` ran in order: each creation as
    /// `created(by:)` reads it, less what a later `DROP TABLE|INDEX [IF EXISTS] name` removed.
    public static func present(after migrations: [String]) -> Set<String> {
        var present = Set<String>()
        for change in changes(in: migrations) {
            switch change {
            case .created(let name): present.insert(name)
            case .dropped(let name): present.remove(name)
            }
        }
        return present
    }

    private enum Change {
        case created(String)
        case dropped(String)
    }

    /// Every creation and drop of a table or index, in the order the migrations make them.
    private static func changes(in migrations: [String]) -> [Change] {
        var changes: [Change] = []
        for migration in migrations {
            let words = migration.split(whereSeparator: { " \n\t(),;".contains($0) }).map(String.init)
            for index in words.indices {
                func word(_ offset: Int) -> String? { index + offset < words.count ? words[index + offset] : nil }
                switch words[index] {
                case "CREATE":
                    var next = word(1) == "UNIQUE" ? 2 : 1
                    guard word(next) == "TABLE" || word(next) == "INDEX" else { continue }
                    next += 1
                    if word(next) == "IF" && word(next + 1) == "NOT" && word(next + 2) == "EXISTS" { next += 3 }
                    if let name = word(next) { changes.append(.created(name)) }
                case "CONSTRAINT":
                    if let name = word(1), word(2) == "PRIMARY" || word(2) == "UNIQUE" { changes.append(.created(name)) }
                case "DROP":
                    guard word(1) == "TABLE" || word(1) == "INDEX" else { continue }
                    let next = word(2) == "IF" && word(3) == "EXISTS" ? 4 : 2
                    if let name = word(next) { changes.append(.dropped(name)) }
                default:
                    continue
                }
            }
        }
        return changes
    }
}
