import LarderAPI
public import LarderWire

/// The default data of a new database (issue 2, section 2): nine category
/// groups, their item categories, and four locations.
///
/// Backends insert it once, in the transaction that creates the schema.
public enum SeedData {
    /// Group name, color, and its item categories (name, icon).
    static let categoryGroups: [(name: String, colorHex: String, itemCategories: [(name: String, icon: String)])] = [
        ("食品", "#34C759", [("食品", "carrot.fill"), ("蔬果", "leaf.fill"), ("飲品", "cup.and.saucer.fill"),
                             ("酒", "wineglass.fill")]),
        ("電器", "#007AFF", [("電器", "lightbulb.fill")]),
        ("家具", "#763300", [("家具", "bed.double.fill")]),
        ("消耗", "#253705", [("消耗品", "minus.plus.batteryblock.stack.fill"), ("清潔用品", "hands.and.sparkles")]),
        ("衛生", "#900C3F", [("衛生用品", "bandage.fill")]),
        ("護理", "#E6B800", [("面膜", "face.smiling")]),
        ("運動", "#2D3B5E", [("腳踏車", "bicycle")]),
        ("文具", "#F04AA7", [("文具", "pencil")]),
        ("寵物", "#AF52DE", []),
    ]

    /// Location name and color.
    static let locations: [(name: String, colorHex: String)] = [
        ("客廳", "#FF5733"), ("廚房", "#33B5FF"), ("臥室", "#28A745"), ("浴室", "#FFC107"),
    ]

    /// Inserts the defaults with fresh ids through `db` (inside the caller's transaction).
    public static func insert(into db: any StoreWriter) throws(RPCError) {
        let now = StoreClock.now()
        for group in categoryGroups {
            let groupID = StoreID.generate()
            try db.insertCategoryGroup(CategoryGroup(id: groupID, name: group.name, colorHex: group.colorHex,
                                                     createTime: now, updateTime: now))
            for category in group.itemCategories {
                try db.insertItemCategory(ItemCategory(id: StoreID.generate(), name: category.name,
                                                       iconName: category.icon, categoryGroupID: groupID,
                                                       createTime: now, updateTime: now))
            }
        }
        for location in locations {
            try db.insertLocation(Location(id: StoreID.generate(), name: location.name, colorHex: location.colorHex,
                                           createTime: now, updateTime: now))
        }
    }
}
