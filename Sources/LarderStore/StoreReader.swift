public import LarderAPI
public import LarderWire

/// The read primitives a storage backend implements: plain queries, no rules.
///
/// `Operations` holds every rule and calls these inside a transaction the
/// `Store` opened. Ids passed in are already validated and lower case.
/// Backends map their own failures to `RPCError` (usually INTERNAL or UNAVAILABLE).
public protocol StoreReader {
    /// Adds a call's `deadline` (`CLOCK_MONOTONIC` nanoseconds; nil = none) to those that bound the
    /// database waits of the current transaction: a read's as it runs; every write's before the
    /// write transaction's first statement (`StoreExecutor`, from `StoreWrite.deadline`).
    func boundWaits(byDeadline deadline: UInt64?)

    /// The location with `id`, or nil.
    func location(id: String) throws(RPCError) -> Location?
    /// The locations of one keyset page, sorted by name (then id).
    func locations(_ page: NamePageQuery) throws(RPCError) -> [Location]

    /// The category group with `id` (its `itemCategories` left empty), or nil.
    func categoryGroup(id: String) throws(RPCError) -> CategoryGroup?
    /// The category groups of one keyset page (their `itemCategories` left empty), sorted by
    /// name (then id).
    func categoryGroups(_ page: NamePageQuery) throws(RPCError) -> [CategoryGroup]

    /// The item category with `id`, or nil.
    func itemCategory(id: String) throws(RPCError) -> ItemCategory?
    /// The item categories of one keyset page of group `groupID` (all groups when nil),
    /// sorted by name (then id).
    func itemCategories(groupID: String?, _ page: NamePageQuery) throws(RPCError) -> [ItemCategory]
    /// How many item categories belong to group `groupID`.
    func itemCategoryCount(groupID: String) throws(RPCError) -> Int

    /// The meal record with `id`, or nil.
    func mealRecord(id: String) throws(RPCError) -> MealRecord?
    /// One keyset page of meal records, newest first (eaten_at desc, id desc), each
    /// in its protobuf encoding (`larder.v1.MealRecord`).
    func mealRecords(_ query: MealRecordPageQuery) throws(RPCError) -> EncodedMessages
    /// Calorie totals and meal counts grouped by local day and category, in that order.
    func mealSummary(_ query: MealSummaryQuery) throws(RPCError) -> [MealSummaryRow]
}
