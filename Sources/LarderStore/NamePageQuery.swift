/// One keyset page of a list sorted by (name, id): locations, category groups and
/// item categories.
///
/// Rows come strictly after `after` in (name, id) order, compared as bytes (SQLite's
/// BINARY, PostgreSQL's "C" collation), at most `limit` of them, leaving out those whose
/// name is longer than `maxNameBytes`.
public struct NamePageQuery: Hashable, Sendable {
    /// The last row of the previous page; `NameCursor.start` for the first page.
    public var after: NameCursor
    /// The most rows to return.
    public var limit: Int
    /// Rows whose name has more UTF-8 bytes than this are left out.
    public var maxNameBytes: Int

    public init(after: NameCursor = .start, limit: Int, maxNameBytes: Int = .max) {
        self.after = after
        self.limit = limit
        self.maxNameBytes = maxNameBytes
    }

    /// Every row, in one page.
    public static let all = NamePageQuery(limit: .max)
}

/// A position in (name, id) order.
public struct NameCursor: Hashable, Sendable {
    public var name: String
    public var id: String

    public init(name: String, id: String) {
        self.name = name
        self.id = id
    }

    /// Before every row: names are never empty.
    public static let start = NameCursor(name: "", id: "")

    /// True when this position comes before `other` in (name, id) order, compared as the
    /// backends compare: byte by byte.
    public func isBefore(_ other: NameCursor) -> Bool {
        if name.utf8.elementsEqual(other.name.utf8) { return id.utf8.lexicographicallyPrecedes(other.id.utf8) }
        return name.utf8.lexicographicallyPrecedes(other.name.utf8)
    }
}
