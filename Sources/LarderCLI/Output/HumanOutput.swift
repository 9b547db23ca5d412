public import LarderAPI

/// The human-readable views of the larder.v1 messages: tables and detail blocks.
public enum HumanOutput {
    /// `Name  value` lines, values aligned.
    public static func detail(_ fields: [(String, String)]) -> String {
        TableRenderer(columns: [.init(""), .init("")], rows: fields.map { [$0.0, $0.1] }, showsHeader: false).render()
    }

    static func time(_ timestamp: Timestamp?, _ localTime: LocalTime) -> String {
        timestamp.map(localTime.format) ?? "-"
    }

    public static func location(_ location: Location, _ localTime: LocalTime) -> String {
        detail([
            ("ID", location.id), ("Name", location.name), ("Color", location.colorHex),
            ("Created", time(location.createTime, localTime)), ("Updated", time(location.updateTime, localTime)),
        ])
    }

    /// The ID column: cut ids stay unique prefixes that commands accept (see `IDResolver`).
    static let idColumn = TableRenderer.Column("ID", shrinksTo: IDResolver.minimumPrefix + 1)
    /// A name column: cut last, down to a readable start.
    static func nameColumn(_ title: String = "NAME") -> TableRenderer.Column { .init(title, shrinksTo: 10) }

    /// A table of locations, cut to `width` columns when given.
    public static func locations(_ locations: [Location], width: Int? = nil) -> String {
        if locations.isEmpty { return "No locations.\n" }
        return TableRenderer(columns: [idColumn, nameColumn(), .init("COLOR")],
                             rows: locations.map { [$0.id, $0.name, $0.colorHex] }, maxWidth: width).render()
    }

    public static func categoryGroup(_ group: CategoryGroup, _ localTime: LocalTime, withCategories: Bool,
                                     width: Int? = nil) -> String {
        var text = detail([
            ("ID", group.id), ("Name", group.name), ("Color", group.colorHex),
            ("Created", time(group.createTime, localTime)), ("Updated", time(group.updateTime, localTime)),
        ])
        if withCategories {
            text += group.itemCategories.isEmpty
                ? "\nNo item categories in this group.\n"
                : "\nItem categories:\n" + itemCategories(group.itemCategories, groupNames: nil, width: width)
        }
        return text
    }

    public static func categoryGroups(_ groups: [CategoryGroup], width: Int? = nil) -> String {
        if groups.isEmpty { return "No category groups.\n" }
        return TableRenderer(columns: [idColumn, nameColumn(), .init("COLOR")],
                             rows: groups.map { [$0.id, $0.name, $0.colorHex] }, maxWidth: width).render()
    }

    /// One category; with `groupName`, its group shows as the name, then the id.
    public static func itemCategory(_ category: ItemCategory, groupName: String? = nil, _ localTime: LocalTime) -> String {
        detail([
            ("ID", category.id), ("Name", category.name), ("Icon", category.iconName),
            ("Group", groupName.map { "\($0) (\(category.categoryGroupID))" } ?? category.categoryGroupID),
            ("Created", time(category.createTime, localTime)), ("Updated", time(category.updateTime, localTime)),
        ])
    }

    /// A table of categories; with `groupNames`, a GROUP column shows each group's name (or its id if unknown).
    public static func itemCategories(_ categories: [ItemCategory], groupNames: [String: String]?,
                                      width: Int? = nil) -> String {
        if categories.isEmpty { return "No item categories.\n" }
        var columns: [TableRenderer.Column] = [idColumn, nameColumn(), .init("ICON", shrinksTo: 10)]
        if groupNames != nil { columns.append(nameColumn("GROUP")) }
        let rows = categories.map { category in
            var row = [category.id, category.name, category.iconName]
            if let groupNames { row.append(groupNames[category.categoryGroupID] ?? category.categoryGroupID) }
            return row
        }
        return TableRenderer(columns: columns, rows: rows, maxWidth: width).render()
    }

    public static func mealRecord(_ meal: MealRecord, _ localTime: LocalTime) -> String {
        detail([
            ("ID", meal.id), ("Name", meal.name), ("Calories", String(meal.calories)),
            ("Category", meal.category.shortName), ("Eaten at", time(meal.eatenAt, localTime)),
            ("Created", time(meal.createTime, localTime)), ("Updated", time(meal.updateTime, localTime)),
        ])
    }

    public static func mealRecords(_ meals: [MealRecord], _ localTime: LocalTime, width: Int? = nil) -> String {
        if meals.isEmpty { return "No meals.\n" }
        let columns: [TableRenderer.Column] = [
            idColumn, .init("EATEN AT"), .init("CATEGORY"), .init("CALORIES", .right), nameColumn(),
        ]
        let rows = meals.map { meal in
            [meal.id, time(meal.eatenAt, localTime), meal.category.shortName, String(meal.calories), meal.name]
        }
        return TableRenderer(columns: columns, rows: rows, maxWidth: width).render()
    }

    /// One row per day, one column per meal category (calories), and a TOTAL row.
    public static func summary(_ summary: SummarizeMealRecordsResponse, offset: UTCOffset, width: Int? = nil) -> String {
        if summary.days.isEmpty { return "No meals in this range (days at UTC\(offset)).\n" }
        let categories = MealCategory.allCases.filter { $0 != .unspecified }
        var columns: [TableRenderer.Column] = [.init("DATE"), .init("MEALS", .right), .init("CALORIES", .right)]
        columns += categories.map { .init($0.shortName.uppercased(), .right) }
        func cells(_ totals: [CategoryTotal]) -> [String] {
            categories.map { category in
                totals.first { $0.category == category }.map { String($0.totalCalories) } ?? "-"
            }
        }
        var rows = summary.days.map { day in
            [day.date, String(day.mealCount), String(day.totalCalories)] + cells(day.categories)
        }
        rows.append(["TOTAL", String(summary.mealCount), String(summary.totalCalories)] + cells(summary.categories))
        return TableRenderer(columns: columns, rows: rows, maxWidth: width).render()
            + "Days are local dates at UTC\(offset).\n"
    }
}
