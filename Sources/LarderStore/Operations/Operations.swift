/// Every RPC of Larder's services as one function: validation, rules and
/// the calls to the backend primitives, independent of any database.
///
/// Each function is named after its RPC method (`CreateLocation` →
/// `createLocation`). Create, Update and Delete take a `StoreWriter` and
/// belong in `Store.write`; Get, List and Summarize take a `StoreReader` and
/// belong in `Store.read`. All throw `RPCError` with a canonical code:
/// INVALID_ARGUMENT (bad field, named), NOT_FOUND, ALREADY_EXISTS,
/// FAILED_PRECONDITION, or the backend's UNAVAILABLE / INTERNAL.
public enum Operations {
    /// The update-mask paths of each entity.
    public static let locationPaths = ["name", "color_hex"]
    public static let categoryGroupPaths = ["name", "color_hex"]
    public static let itemCategoryPaths = ["name", "icon_name", "category_group_id"]
    public static let mealRecordPaths = ["name", "calories", "category", "eaten_at"]
}
