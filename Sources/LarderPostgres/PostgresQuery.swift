/// Every data statement the PostgreSQL backend runs, each prepared once per
/// connection under its own name. All values are bound parameters (`$n`);
/// the text never contains data. Plain SQL that PostgreSQL-wire engines
/// (CockroachDB, YugabyteDB) accept as well.
enum PostgresQuery: Int, CaseIterable {
    case locationByID, locations, insertLocation, updateLocation, deleteLocation
    case groupByID, groups, insertGroup, updateGroup, deleteGroup
    case itemCategoryByID, itemCategories, itemCategoriesOfGroup, itemCategoryCount
    case insertItemCategory, updateItemCategory, deleteItemCategory, deleteItemCategoriesOfGroup
    case mealByID, insertMeal, updateMeal, deleteMeal
    case mealPage, mealPageAfter, mealPageCategory, mealPageCategoryAfter
    case mealSummary
    /// The by-id reads of a write transaction: they lock the row until it commits, so a
    /// read-modify-write (an update with a field mask, a delete that checks first) on
    /// another replica waits and then reads what this one wrote, instead of writing back
    /// the values it read before.
    case locationByIDForUpdate, groupByIDForUpdate, itemCategoryByIDForUpdate, mealByIDForUpdate

    private static let locationColumns = "id, name, color_hex, create_time_ms, update_time_ms"
    private static let groupColumns = "id, name, color_hex, create_time_ms, update_time_ms"
    private static let itemCategoryColumns = "id, name, icon_name, category_group_id, create_time_ms, update_time_ms"
    private static let mealColumns =
        "id, name, calories, category, eaten_at_ms, create_time_ms, update_time_ms, eaten_at_ns"
    /// Meal pages and summaries: $1/$2 the start (ms, ns; inclusive), $3/$4 the end
    /// (exclusive); the plain bounds on eaten_at_ms give the index range.
    private static let mealRange = "FROM meal_records WHERE eaten_at_ms >= $1 AND eaten_at_ms <= $3"
        + " AND (eaten_at_ms, eaten_at_ns) >= ($1, $2) AND (eaten_at_ms, eaten_at_ns) < ($3, $4)"
    /// $5: the page size.
    private static let mealOrder = " ORDER BY eaten_at_ms DESC, eaten_at_ns DESC, id DESC LIMIT $5"

    /// Keyset pages of the lists sorted by (name, id): rows after ($1, $2) whose name has at
    /// most $4 bytes, at most $3 of them.
    private static let namePage = " (name, id) > ($1, $2) AND octet_length(name) <= $4::bigint ORDER BY name, id LIMIT $3"
    /// The same where names are unique (locations, groups, one group's categories): ordered by
    /// name alone, the unique index on the name gives the order by itself (ordered by name and
    /// id, PostgreSQL added an incremental sort, or sorted every row after the cursor).
    private static let uniqueNamePage = " (name, id) > ($1, $2) AND octet_length(name) <= $4::bigint ORDER BY name LIMIT $3"

    /// The prepared statement's name on the connection.
    var name: String { "larder_\(self)" }

    var sql: String {
        switch self {
        case .locationByID: "SELECT \(Self.locationColumns) FROM locations WHERE id = $1"
        case .locations: "SELECT \(Self.locationColumns) FROM locations WHERE" + Self.uniqueNamePage
        case .insertLocation: "INSERT INTO locations (\(Self.locationColumns)) VALUES ($1, $2, $3, $4, $5)"
        case .updateLocation: "UPDATE locations SET name = $2, color_hex = $3, update_time_ms = $4 WHERE id = $1"
        case .deleteLocation: "DELETE FROM locations WHERE id = $1"

        case .groupByID: "SELECT \(Self.groupColumns) FROM category_groups WHERE id = $1"
        case .groups: "SELECT \(Self.groupColumns) FROM category_groups WHERE" + Self.uniqueNamePage
        case .insertGroup: "INSERT INTO category_groups (\(Self.groupColumns)) VALUES ($1, $2, $3, $4, $5)"
        case .updateGroup: "UPDATE category_groups SET name = $2, color_hex = $3, update_time_ms = $4 WHERE id = $1"
        case .deleteGroup: "DELETE FROM category_groups WHERE id = $1"

        case .itemCategoryByID: "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE id = $1"
        case .itemCategories: "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE" + Self.namePage
        case .itemCategoriesOfGroup:
            "SELECT \(Self.itemCategoryColumns) FROM item_categories WHERE category_group_id = $5 AND" + Self.uniqueNamePage
        case .itemCategoryCount: "SELECT count(*) FROM item_categories WHERE category_group_id = $1"
        case .insertItemCategory:
            "INSERT INTO item_categories (\(Self.itemCategoryColumns)) VALUES ($1, $2, $3, $4, $5, $6)"
        case .updateItemCategory:
            "UPDATE item_categories SET name = $2, icon_name = $3, category_group_id = $4, update_time_ms = $5 WHERE id = $1"
        case .deleteItemCategory: "DELETE FROM item_categories WHERE id = $1"
        case .deleteItemCategoriesOfGroup: "DELETE FROM item_categories WHERE category_group_id = $1"

        case .mealByID: "SELECT \(Self.mealColumns) FROM meal_records WHERE id = $1"
        case .locationByIDForUpdate: Self.locationByID.sql + " FOR UPDATE"
        case .groupByIDForUpdate: Self.groupByID.sql + " FOR UPDATE"
        case .itemCategoryByIDForUpdate: Self.itemCategoryByID.sql + " FOR UPDATE"
        case .mealByIDForUpdate: Self.mealByID.sql + " FOR UPDATE"
        case .insertMeal:
            "INSERT INTO meal_records (\(Self.mealColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        case .updateMeal:
            "UPDATE meal_records SET name = $2, calories = $3, category = $4, eaten_at_ms = $5, update_time_ms = $6, "
                + "eaten_at_ns = $7 WHERE id = $1"
        case .deleteMeal: "DELETE FROM meal_records WHERE id = $1"

        // Keyset pages: rows strictly after the cursor ($6-$8, or $7-$9 after a
        // category $6) in (eaten_at desc, id desc) order, as one row comparison
        // that the index range answers directly.
        case .mealPage: "SELECT \(Self.mealColumns) \(Self.mealRange)" + Self.mealOrder
        case .mealPageAfter:
            "SELECT \(Self.mealColumns) \(Self.mealRange) AND (eaten_at_ms, eaten_at_ns, id) < ($6, $7, $8)"
                + Self.mealOrder
        case .mealPageCategory:
            "SELECT \(Self.mealColumns) \(Self.mealRange) AND category = $6" + Self.mealOrder
        case .mealPageCategoryAfter:
            "SELECT \(Self.mealColumns) \(Self.mealRange) AND category = $6"
                + " AND (eaten_at_ms, eaten_at_ns, id) < ($7, $8, $9)" + Self.mealOrder
        case .mealSummary:
            // Bias the dividend positive so integer division floors (see MealSummaryQuery.dayBias).
            // $5: the offset in milliseconds.
            """
            SELECT (eaten_at_ms + $5 + 86400000000000) / 86400000 - 1000000 AS day, category,
                   sum(calories), count(*)
            \(Self.mealRange)
            GROUP BY day, category ORDER BY day, category
            """
        }
    }
}
