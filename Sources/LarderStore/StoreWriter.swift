public import LarderAPI
public import LarderWire

/// The write primitives a storage backend implements, on top of the reads.
///
/// Values passed in are complete and validated (ids lower case, times set).
/// Backends map constraint violations with `StoreError`: a unique key to
/// ALREADY_EXISTS, a foreign key to FAILED_PRECONDITION.
public protocol StoreWriter: StoreReader {
    /// Inserts a new location.
    func insertLocation(_ location: Location) throws(RPCError)
    /// Replaces the stored location with the same id; false when there is none.
    func updateLocation(_ location: Location) throws(RPCError) -> Bool
    /// Deletes the location; false when there is none.
    func deleteLocation(id: String) throws(RPCError) -> Bool

    /// Inserts a new category group (its `itemCategories` are ignored).
    func insertCategoryGroup(_ group: CategoryGroup) throws(RPCError)
    /// Replaces the stored group with the same id; false when there is none.
    func updateCategoryGroup(_ group: CategoryGroup) throws(RPCError) -> Bool
    /// Deletes the group; false when there is none. Fails while categories still reference it.
    func deleteCategoryGroup(id: String) throws(RPCError) -> Bool

    /// Inserts a new item category.
    func insertItemCategory(_ category: ItemCategory) throws(RPCError)
    /// Replaces the stored item category with the same id; false when there is none.
    func updateItemCategory(_ category: ItemCategory) throws(RPCError) -> Bool
    /// Deletes the item category; false when there is none.
    func deleteItemCategory(id: String) throws(RPCError) -> Bool
    /// Deletes every item category of group `groupID`; returns how many.
    func deleteItemCategories(groupID: String) throws(RPCError) -> Int

    /// Inserts a new meal record, given with its encoding for a backend that stores one.
    func insertMealRecord(_ encoded: EncodedMessage<MealRecord>) throws(RPCError)
    /// Replaces the stored meal record with the same id; false when there is none.
    func updateMealRecord(_ record: MealRecord) throws(RPCError) -> Bool
    /// Deletes the meal record; false when there is none.
    func deleteMealRecord(id: String) throws(RPCError) -> Bool
}
