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

    private static let locationColumns = "id, name, color_hex, create_time_ms, update_time_ms"
    private static let groupColumns = "id, name, color_hex, create_time_ms, update_time_ms"
    private static let itemCategoryColumns = "id, name, icon_name, category_group_id, create_time_ms, update_time_ms"
    private static let mealColumns = "id, name, calories, category, eaten_at_ms, create_time_ms, update_time_ms"
    /// What a page of meal records reads: the stored encoding, and the key to rebuild it
    /// should it be missing.
    private static let mealPageColumns = "encoding, eaten_at_ms, id"
    private static let mealOrder = " ORDER BY eaten_at_ms DESC, id DESC LIMIT ?3"
    /// Rows strictly after the cursor (?4, ?5) in (eaten_at_ms desc, id desc) order.
    /// The caller also lowers the exclusive bound ?2 to at most ?4 + 1, so the index
    /// range itself starts at the cursor (one upper bound, not two for SQLite to pick from).
    private static let afterCursor = " AND (eaten_at_ms < ?4 OR id < ?5)"

    var sql: String {
        switch self {
        case .begin: "BEGIN"
        case .beginImmediate: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"
        case .savepoint: "SAVEPOINT op"
        case .release: "RELEASE op"
        case .rollbackToSavepoint: "ROLLBACK TO op"

        case .locationByID: "SELECT \(Self.locationColumns) FROM locations WHERE id = ?1"
        case .locations: "SELECT \(Self.locationColumns) FROM locations ORDER BY name, id"
        case .insertLocation:
            "INSERT INTO locations (\(Self.locationColumns)) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .updateLocation: "UPDATE locations SET name = ?2, color_hex = ?3, update_time_ms = ?4 WHERE id = ?1"
        case .deleteLocation: "DELETE FROM locations WHERE id = ?1"

        case .groupByID: "SELECT \(Self.groupColumns) FROM category_groups WHERE id = ?1"
        case .groups: "SELECT \(Self.groupColumns) FROM category_groups ORDER BY name, id"
        case .insertGroup:
            "INSERT INTO category_groups (\(Self.groupColumns)) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .updateGroup: "UPDATE category_groups SET name = ?2, color_hex = ?3, update_time_ms = ?4 WHERE id = ?1"
        case .deleteGroup: "DELETE FROM category_groups WHERE id = ?1"

        case .itemCategoryByID: "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE id = ?1"
        case .itemCategories: "SELECT \(Self.itemCategoryColumns) FROM item_categories ORDER BY name, id"
        case .itemCategoriesOfGroup:
            "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE category_group_id = ?1 ORDER BY name, id"
        case .itemCategoryCount: "SELECT count(*) FROM item_categories WHERE category_group_id = ?1"
        case .insertItemCategory:
            "INSERT INTO item_categories (\(Self.itemCategoryColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        case .updateItemCategory:
            "UPDATE item_categories SET name = ?2, icon_name = ?3, category_group_id = ?4, update_time_ms = ?5 WHERE id = ?1"
        case .deleteItemCategory: "DELETE FROM item_categories WHERE id = ?1"
        case .deleteItemCategoriesOfGroup: "DELETE FROM item_categories WHERE category_group_id = ?1"

        // Meal records are found by their primary key (eaten_at_ms, id); MealKeyIndex
        // knows each id's eaten_at_ms.
        case .mealByKey: "SELECT \(Self.mealColumns) FROM meal_records WHERE eaten_at_ms = ?2 AND id = ?1"
        case .insertMeal:
            "INSERT INTO meal_records (\(Self.mealColumns), encoding) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        case .updateMeal:
            "UPDATE meal_records SET name = ?2, calories = ?3, category = ?4, eaten_at_ms = ?5, update_time_ms = ?6, encoding = ?7 WHERE eaten_at_ms = ?8 AND id = ?1"
        case .deleteMeal: "DELETE FROM meal_records WHERE eaten_at_ms = ?2 AND id = ?1"
        case .setMealEncoding: "UPDATE meal_records SET encoding = ?2 WHERE eaten_at_ms = ?3 AND id = ?1"

        case .mealPage:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE eaten_at_ms >= ?1 AND eaten_at_ms < ?2"
                + Self.mealOrder
        case .mealPageAfter:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE eaten_at_ms >= ?1 AND eaten_at_ms < ?2"
                + Self.afterCursor + Self.mealOrder
        case .mealPageCategory:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE category = ?6 AND eaten_at_ms >= ?1 AND eaten_at_ms < ?2"
                + Self.mealOrder
        case .mealPageCategoryAfter:
            "SELECT \(Self.mealPageColumns) FROM meal_records WHERE category = ?6 AND eaten_at_ms >= ?1 AND eaten_at_ms < ?2"
                + Self.afterCursor + Self.mealOrder
        case .mealSummary:
            // Bias the dividend positive so integer division floors (see MealSummaryQuery.dayBias).
            """
            SELECT (eaten_at_ms + ?3 + 86400000000000) / 86400000 - 1000000 AS day, category,
                   sum(calories), count(*)
            FROM meal_records WHERE eaten_at_ms >= ?1 AND eaten_at_ms < ?2
            GROUP BY day, category ORDER BY day, category
            """
        }
    }
}
