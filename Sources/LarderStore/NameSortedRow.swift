public import LarderAPI

/// A row of the lists sorted by (name, id): where it stands in that order, and an upper
/// bound of its encoding as a field of a list reply.
public protocol NameSortedRow {
    var name: String { get }
    var id: String { get }
    /// At least the bytes of this row in a list reply: its encoding with tag and length.
    var listEncodingBound: Int { get }
}

extension NameSortedRow {
    /// This row's position in (name, id) order.
    public var nameCursor: NameCursor { NameCursor(name: name, id: id) }
}

extension Location: NameSortedRow {
    /// The name, plus the id, color and timestamps with their tags and lengths (under 100 bytes).
    public var listEncodingBound: Int { name.utf8.count + 128 }
}

extension CategoryGroup: NameSortedRow {
    /// As a location's: a list leaves the group's item categories empty.
    public var listEncodingBound: Int { name.utf8.count + 128 }
}

extension ItemCategory: NameSortedRow {
    /// The name and icon, plus two ids and the timestamps with their tags and lengths.
    public var listEncodingBound: Int { name.utf8.count + iconName.utf8.count + 192 }
}
