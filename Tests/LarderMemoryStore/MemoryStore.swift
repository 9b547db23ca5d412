public import LarderAPI
public import LarderStore
public import LarderWire

/// A small in-memory `StoreWriter`: enough behaviour (unique ids and names,
/// foreign keys, keyset pages, summaries) for `Operations` to take every path,
/// with no database and no threads.
///
/// The payload fuzz target creates one per input, pre-filled with
/// `MemoryStore.seeded`, so each input runs against the same state; the
/// in-process server tests drive one from a store thread (LarderTestSupport's
/// `InMemoryStore`). Not thread-safe: one thread at a time.
public final class MemoryStore: StoreWriter {
    private var locationRows: [String: Location] = [:]
    private var groupRows: [String: CategoryGroup] = [:]
    private var categoryRows: [String: ItemCategory] = [:]
    private var mealRows: [String: MealRecord] = [:]

    /// Ids the seed corpus refers to, so Get/Update/Delete can find something.
    public static let locationID = "0d6f1c9e-3b7a-4f7e-9a53-8b1f4c2d6e70"
    public static let groupID = "a1b2c3d4-0000-4000-8000-000000000001"
    public static let emptyGroupID = "a1b2c3d4-0000-4000-8000-000000000002"
    public static let categoryID = "5b0c5d0e-8a8e-4b8f-a1c2-0f3e5d7c9b11"
    public static let mealIDs = (1...3).map { "c0ffee00-0000-4000-8000-00000000000\($0)" }

    /// An empty store.
    public init() {}

    /// A copy holding the same rows: a write transaction's snapshot, put back when it fails.
    public func copy() -> MemoryStore {
        let copy = MemoryStore()
        copy.locationRows = locationRows
        copy.groupRows = groupRows
        copy.categoryRows = categoryRows
        copy.mealRows = mealRows
        return copy
    }

    /// Replaces every row with those of `other`.
    public func restore(from other: MemoryStore) {
        locationRows = other.locationRows
        groupRows = other.groupRows
        categoryRows = other.categoryRows
        mealRows = other.mealRows
    }

    /// A store holding one of each entity (and three meals on two days).
    public static func seeded() -> MemoryStore {
        let store = MemoryStore()
        let time = Timestamp(unixMilliseconds: 1_717_000_000_000)
        store.locationRows[locationID] = Location(id: locationID, name: "Pantry", colorHex: "#112233",
                                               createTime: time, updateTime: time)
        store.groupRows[groupID] = CategoryGroup(id: groupID, name: "Food", colorHex: "#FF8800",
                                              createTime: time, updateTime: time)
        store.groupRows[emptyGroupID] = CategoryGroup(id: emptyGroupID, name: "Tools", colorHex: "#00AA55",
                                                   createTime: time, updateTime: time)
        store.categoryRows[categoryID] = ItemCategory(id: categoryID, name: "Rice", iconName: "leaf",
                                                    categoryGroupID: groupID, createTime: time, updateTime: time)
        for (index, id) in mealIDs.enumerated() {
            let eaten = Timestamp(unixMilliseconds: 1_717_000_000_000 + Int64(index) * 43_200_000)
            store.mealRows[id] = MealRecord(id: id, name: "Meal \(index)", calories: Int32(100 * index),
                                         category: MealCategory.allCases[1 + index % 4], eatenAt: eaten,
                                         createTime: time, updateTime: time)
        }
        return store
    }

    // MARK: - Reads

    public func location(id: String) throws(RPCError) -> Location? { locationRows[id] }
    public func locations(_ page: NamePageQuery) throws(RPCError) -> [Location] {
        Self.page(locationRows.values, page)
    }
    public func categoryGroup(id: String) throws(RPCError) -> CategoryGroup? { groupRows[id] }
    public func categoryGroups(_ page: NamePageQuery) throws(RPCError) -> [CategoryGroup] {
        Self.page(groupRows.values, page)
    }
    public func itemCategory(id: String) throws(RPCError) -> ItemCategory? { categoryRows[id] }
    public func itemCategories(groupID: String?, _ page: NamePageQuery) throws(RPCError) -> [ItemCategory] {
        Self.page(categoryRows.values.filter { groupID == nil || $0.categoryGroupID == groupID }, page)
    }

    /// The rows of a keyset page in (name, id) byte order, as the real backends return them.
    private static func page<Row: NameSortedRow>(_ rows: some Sequence<Row>, _ page: NamePageQuery) -> [Row] {
        Array(rows.filter { page.after.isBefore($0.nameCursor) && $0.name.utf8.count <= page.maxNameBytes }
            .sorted { $0.nameCursor.isBefore($1.nameCursor) }.prefix(page.limit))
    }
    public func itemCategoryCount(groupID: String) throws(RPCError) -> Int {
        categoryRows.values.count { $0.categoryGroupID == groupID }
    }
    public func mealRecord(id: String) throws(RPCError) -> MealRecord? { mealRows[id] }

    public func mealRecords(_ query: MealRecordPageQuery) throws(RPCError) -> EncodedMessages {
        func at(_ meal: MealRecord) -> StoreInstant { StoreInstant(meal.eatenAt ?? Timestamp(seconds: 0)) }
        let rows = mealRows.values.filter { meal in
            guard at(meal) >= query.start, at(meal) < query.end else { return false }
            if let category = query.category, meal.category != category { return false }
            if let after = query.after {
                return at(meal) < after.eatenAt || (at(meal) == after.eatenAt && meal.id < after.id)
            }
            return true
        }
        let sorted = rows.sorted { (at($0), $0.id) > (at($1), $1.id) }
        var page = EncodedMessages()
        for record in sorted.prefix(max(0, query.limit)) { page.append(ProtoCodec.encode(record)) }
        return page
    }

    public func mealSummary(_ query: MealSummaryQuery) throws(RPCError) -> [MealSummaryRow] {
        var rows: [Int64: [Int32: MealSummaryRow]] = [:]
        for meal in mealRows.values {
            let instant = StoreInstant(meal.eatenAt ?? Timestamp(seconds: 0))
            guard instant >= query.start, instant < query.end else { continue }
            let at = instant.milliseconds
            // The SQL's floor division, without its bias: Swift can floor directly.
            let local = at + query.offsetMilliseconds
            let day = local >= 0 ? local / MealSummaryQuery.dayMilliseconds
                : -((-local + MealSummaryQuery.dayMilliseconds - 1) / MealSummaryQuery.dayMilliseconds)
            var row = rows[day, default: [:]][meal.category.rawValue]
                ?? MealSummaryRow(day: day, category: meal.category.rawValue, totalCalories: 0, mealCount: 0)
            row.totalCalories += Int64(meal.calories)
            row.mealCount += 1
            rows[day, default: [:]][meal.category.rawValue] = row
        }
        return rows.keys.sorted().flatMap { day in
            (rows[day] ?? [:]).keys.sorted().compactMap { rows[day]?[$0] }
        }
    }

    // MARK: - Writes

    public func insertLocation(_ location: Location) throws(RPCError) {
        guard locationRows[location.id] == nil else { throw StoreError.duplicateID("location", id: location.id) }
        guard !locationRows.values.contains(where: { $0.name == location.name }) else {
            throw StoreError.duplicateName("location", name: location.name)
        }
        locationRows[location.id] = location
    }

    public func updateLocation(_ location: Location) throws(RPCError) -> Bool {
        guard locationRows[location.id] != nil else { return false }
        guard !locationRows.values.contains(where: { $0.name == location.name && $0.id != location.id }) else {
            throw StoreError.duplicateName("location", name: location.name)
        }
        locationRows[location.id] = location
        return true
    }

    public func deleteLocation(id: String) throws(RPCError) -> Bool { locationRows.removeValue(forKey: id) != nil }

    public func insertCategoryGroup(_ group: CategoryGroup) throws(RPCError) {
        guard groupRows[group.id] == nil else { throw StoreError.duplicateID("category group", id: group.id) }
        guard !groupRows.values.contains(where: { $0.name == group.name }) else {
            throw StoreError.duplicateName("category group", name: group.name)
        }
        var stored = group
        stored.itemCategories = []
        groupRows[group.id] = stored
    }

    public func updateCategoryGroup(_ group: CategoryGroup) throws(RPCError) -> Bool {
        guard groupRows[group.id] != nil else { return false }
        guard !groupRows.values.contains(where: { $0.name == group.name && $0.id != group.id }) else {
            throw StoreError.duplicateName("category group", name: group.name)
        }
        var stored = group
        stored.itemCategories = []
        groupRows[group.id] = stored
        return true
    }

    public func deleteCategoryGroup(id: String) throws(RPCError) -> Bool {
        guard itemCategoryCountUnchecked(id) == 0 else { throw StoreError.categoryGroupInUse(id: id) }
        return groupRows.removeValue(forKey: id) != nil
    }

    public func insertItemCategory(_ category: ItemCategory) throws(RPCError) {
        guard categoryRows[category.id] == nil else { throw StoreError.duplicateID("item category", id: category.id) }
        try checkItemCategory(category)
        categoryRows[category.id] = category
    }

    public func updateItemCategory(_ category: ItemCategory) throws(RPCError) -> Bool {
        guard categoryRows[category.id] != nil else { return false }
        try checkItemCategory(category)
        categoryRows[category.id] = category
        return true
    }

    public func deleteItemCategory(id: String) throws(RPCError) -> Bool { categoryRows.removeValue(forKey: id) != nil }

    public func deleteItemCategories(groupID: String) throws(RPCError) -> Int {
        let ids = categoryRows.values.filter { $0.categoryGroupID == groupID }.map(\.id)
        for id in ids { categoryRows[id] = nil }
        return ids.count
    }

    public func insertMealRecord(_ encoded: EncodedMessage<MealRecord>) throws(RPCError) {
        let record = encoded.message
        guard mealRows[record.id] == nil else { throw StoreError.duplicateID("meal record", id: record.id) }
        mealRows[record.id] = record
    }

    public func updateMealRecord(_ record: MealRecord) throws(RPCError) -> Bool {
        guard mealRows[record.id] != nil else { return false }
        mealRows[record.id] = record
        return true
    }

    public func deleteMealRecord(id: String) throws(RPCError) -> Bool { mealRows.removeValue(forKey: id) != nil }

    private func itemCategoryCountUnchecked(_ groupID: String) -> Int {
        categoryRows.values.count { $0.categoryGroupID == groupID }
    }

    /// The foreign key and the (group, name) unique key.
    private func checkItemCategory(_ category: ItemCategory) throws(RPCError) {
        guard groupRows[category.categoryGroupID] != nil else {
            throw StoreError.missingCategoryGroup(id: category.categoryGroupID)
        }
        guard !categoryRows.values.contains(where: {
            $0.categoryGroupID == category.categoryGroupID && $0.name == category.name && $0.id != category.id
        }) else {
            throw StoreError.duplicateItemCategoryName(category.name, groupID: category.categoryGroupID)
        }
    }
}
