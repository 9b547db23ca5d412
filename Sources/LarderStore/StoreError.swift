public import LarderWire

/// The errors every backend and `Operations` report, worded once.
public enum StoreError {
    /// NOT_FOUND: `location "…" not found`.
    public static func notFound(_ entity: String, id: String) -> RPCError {
        .notFound("\(entity) \"\(id)\" not found")
    }

    /// ALREADY_EXISTS: `location id "…" already exists`.
    public static func duplicateID(_ entity: String, id: String) -> RPCError {
        .alreadyExists("\(entity) id \"\(id)\" already exists")
    }

    /// ALREADY_EXISTS: `location name "客廳" already exists`.
    public static func duplicateName(_ entity: String, name: String) -> RPCError {
        .alreadyExists("\(entity) name \(SafeText.quoted(name)) already exists")
    }

    /// ALREADY_EXISTS for an item-category name taken within its group.
    public static func duplicateItemCategoryName(_ name: String, groupID: String) -> RPCError {
        .alreadyExists("item category name \(SafeText.quoted(name)) already exists in category group \"\(groupID)\"")
    }

    /// FAILED_PRECONDITION: the referenced category group is missing.
    public static func missingCategoryGroup(id: String) -> RPCError {
        .failedPrecondition("category group \"\(id)\" does not exist")
    }

    /// FAILED_PRECONDITION: a group that still has item categories cannot be deleted.
    public static func categoryGroupInUse(id: String, count: Int? = nil) -> RPCError {
        let what = count.map { "\($0) item categor\($0 == 1 ? "y" : "ies")" } ?? "item categories"
        return .failedPrecondition(
            "category group \"\(id)\" still has \(what); delete them first or set cascade")
    }
}
