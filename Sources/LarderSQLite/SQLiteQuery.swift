/// Every statement the SQLite backend runs, prepared once per connection.
/// All values are bound parameters; the text never contains data.
enum SQLiteQuery: Int, CaseIterable {
    case begin, beginImmediate, commit, rollback, savepoint, release, rollbackToSavepoint

    case locationByID, locations, insertLocation, updateLocation, deleteLocation
    case groupByID, groups, insertGroup, updateGroup, deleteGroup
    case itemCategoryByID, itemCategories, itemCategoriesOfGroup, itemCategoryCount
    case insertItemCategory, updateItemCategory, deleteItemCategory, deleteItemCategoriesOfGroup
    case mealByKey, insertMeal, updateMeal, deleteMeal, setMealEncoding
    case mealPage, mealPageAfter, mealPageCategory, mealPageCategoryAfter
    case mealSummary
    /// The same, for bounds with nanoseconds: rows of the boundary milliseconds are
    /// compared to the nanosecond.
    case mealPagePrecise, mealPageAfterPrecise, mealPageCategoryPrecise, mealPageCategoryAfterPrecise
    case mealSummaryPrecise

    private static let locationColumns = "id, name, color_hex, create_time_ms, update_time_ms"
    private static let groupColumns = "id, name, color_hex, create_time_ms, update_time_ms"
    private static let itemCategoryColumns = "id, name, icon_name, category_group_id, create_time_ms, update_time_ms"
    /// Keyset pages of the lists sorted by (name, id): rows after (?1, ?2) whose name has at
    /// most ?4 bytes, at most ?3 of them.
    private static let namePage = " (name, id) > (?1, ?2) AND length(CAST(name AS BLOB)) <= ?4 ORDER BY name, id LIMIT ?3"
    private static let mealColumns =
        "id, name, calories, category, eaten_at_ms, create_time_ms, update_time_ms, eaten_at_ns"
    /// What a page of meal records reads: the stored encoding, and the key to rebuild it
    /// should it be missing.
    private static let mealPageColumns = "encoding, eaten_at_ms, id, eaten_at_ns"
    /// Meal pages and summaries: the index range is on eaten_at_ms alone, from ?1 to ?2
    /// inclusive (the last millisecond before the end, lowered to the cursor's). Bounds in
    /// whole milliseconds (no filter, or filters without sub-millisecond digits) need no
    /// more; the precise variants also compare the rows of the boundary milliseconds to
    /// the nanosecond: ?1/?4 the start (ms, ns; inclusive), ?5/?6 the end (exclusive).
    private static let mealRange = "eaten_at_ms >= ?1 AND eaten_at_ms <= ?2"
    private static let mealRangePrecise = mealRange
        + " AND (eaten_at_ms, eaten_at_ns) >= (?1, ?4) AND (eaten_at_ms, eaten_at_ns) < (?5, ?6)"
    private static let mealOrder = " ORDER BY eaten_at_ms DESC, eaten_at_ns DESC, id DESC LIMIT ?3"
    /// Rows strictly after the cursor (?7, ?8, ?9) in (eaten_at desc, id desc) order.
    private static let afterCursor = " AND (eaten_at_ms, eaten_at_ns, id) < (?7, ?8, ?9)"

    /// True for the statements that compare the range's boundary rows to the nanosecond.
    var isPrecise: Bool {
        switch self {
        case .mealPagePrecise, .mealPageAfterPrecise, .mealPageCategoryPrecise, .mealPageCategoryAfterPrecise,
             .mealSummaryPrecise: true
        default: false
        }
    }

    /// The whole-millisecond statement a precise one refines.
    private var wholeMilliseconds: SQLiteQuery {
        switch self {
        case .mealPagePrecise: .mealPage
        case .mealPageAfterPrecise: .mealPageAfter
        case .mealPageCategoryPrecise: .mealPageCategory
        case .mealPageCategoryAfterPrecise: .mealPageCategoryAfter
        case .mealSummaryPrecise: .mealSummary
        default: self
        }
    }

    var sql: String {
        // A precise statement is its whole-millisecond one with the precise range.
        if isPrecise { return wholeMilliseconds.sql.replacing(Self.mealRange, with: Self.mealRangePrecise) }
        return switch self {
        case .begin: "BEGIN"
        case .beginImmediate: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"
        case .savepoint: "SAVEPOINT op"
        case .release: "RELEASE op"
        case .rollbackToSavepoint: "ROLLBACK TO op"

        case .locationByID: "SELECT \(Self.locationColumns) FROM locations WHERE id = ?1"
        case .locations: "SELECT \(Self.locationColumns) FROM locations WHERE" + Self.namePage
        case .insertLocation:
            "INSERT INTO locations (\(Self.locationColumns)) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .updateLocation: "UPDATE locations SET name = ?2, color_hex = ?3, update_time_ms = ?4 WHERE id = ?1"
        case .deleteLocation: "DELETE FROM locations WHERE id = ?1"

        case .groupByID: "SELECT \(Self.groupColumns) FROM category_groups WHERE id = ?1"
        case .groups: "SELECT \(Self.groupColumns) FROM category_groups WHERE" + Self.namePage
        case .insertGroup:
            "INSERT INTO category_groups (\(Self.groupColumns)) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .updateGroup: "UPDATE category_groups SET name = ?2, color_hex = ?3, update_time_ms = ?4 WHERE id = ?1"
        case .deleteGroup: "DELETE FROM category_groups WHERE id = ?1"

        case .itemCategoryByID: "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE id = ?1"
        case .itemCategories: "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE" + Self.namePage
        case .itemCategoriesOfGroup:
            "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE category_group_id = ?5 AND" + Self.namePage
        case .itemCategoryCount: "SELECT count(*) FROM item_categories WHERE category_group_id = ?1"
        case .insertItemCategory:
            "INSERT INTO item_categories (\(Self.itemCategoryColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        case .updateItemCategory:
            "UPDATE item_categories SET name = ?2, icon_name = ?3, category_group_id = ?4, update_time_ms = ?5 WHERE id = ?1"
        case .deleteItemCategory: "DELETE FROM item_categories WHERE id = ?1"
        case .deleteItemCategoriesOfGroup: "DELETE FROM item_categories WHERE category_group_id = ?1"

        // Meal records are found by their primary key (eaten_at_ms, eaten_at_ns, id);
        // MealKeyIndex knows each id's eaten_at.
        case .mealByKey:
            "SELECT \(Self.mealColumns) FROM meal_records WHERE eaten_at_ms = ?2 AND eaten_at_ns = ?3 AND id = ?1"
        case .insertMeal:
            "INSERT INTO meal_records (\(Self.mealColumns), encoding) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        case .updateMeal:
            "UPDATE meal_records SET name = ?2, calories = ?3, category = ?4, eaten_at_ms = ?5, eaten_at_ns = ?10, "
                + "update_time_ms = ?6, encoding = ?7 WHERE eaten_at_ms = ?8 AND eaten_at_ns = ?9 AND id = ?1"
        case .deleteMeal: "DELETE FROM meal_records WHERE eaten_at_ms = ?2 AND eaten_at_ns = ?3 AND id = ?1"
        case .setMealEncoding:
            "UPDATE meal_records SET encoding = ?2 WHERE eaten_at_ms = ?3 AND eaten_at_ns = ?4 AND id = ?1"

        case .mealPage, .mealPagePrecise:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE \(Self.mealRange)" + Self.mealOrder
        case .mealPageAfter, .mealPageAfterPrecise:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE \(Self.mealRange)" + Self.afterCursor + Self.mealOrder
        case .mealPageCategory, .mealPageCategoryPrecise:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE category = ?10 AND \(Self.mealRange)" + Self.mealOrder
        case .mealPageCategoryAfter, .mealPageCategoryAfterPrecise:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE category = ?10 AND \(Self.mealRange)"
                + Self.afterCursor + Self.mealOrder
        case .mealSummary, .mealSummaryPrecise:
            // Bias the dividend positive so integer division floors (see MealSummaryQuery.dayBias).
            // ?3: the offset in milliseconds.
            """
            SELECT (eaten_at_ms + ?3 + 86400000000000) / 86400000 - 1000000 AS day, category,
                   sum(calories), count(*)
            FROM meal_records WHERE \(Self.mealRange)
            GROUP BY day, category ORDER BY day, category
            """
        }
    }
}
