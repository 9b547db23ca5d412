import LarderAPI

/// The larder.v1 messages in the proto3 JSON mapping: lowerCamelCase names,
/// enums by their proto name, 64-bit integers as strings, Timestamps as
/// RFC 3339 in UTC. Scalar and repeated fields are always printed; unset
/// message fields (timestamps) are left out.
public enum JSONOutput {
    public static func timestamp(_ timestamp: Timestamp) -> JSONValue {
        .string(RFC3339.format(timestamp))
    }

    public static func location(_ location: Location) -> JSONValue {
        object([
            ("id", .string(location.id)), ("name", .string(location.name)), ("colorHex", .string(location.colorHex)),
            ("createTime", location.createTime.map(timestamp)), ("updateTime", location.updateTime.map(timestamp)),
        ])
    }

    public static func categoryGroup(_ group: CategoryGroup) -> JSONValue {
        object([
            ("id", .string(group.id)), ("name", .string(group.name)), ("colorHex", .string(group.colorHex)),
            ("createTime", group.createTime.map(timestamp)), ("updateTime", group.updateTime.map(timestamp)),
            ("itemCategories", .array(group.itemCategories.map(itemCategory))),
        ])
    }

    public static func itemCategory(_ category: ItemCategory) -> JSONValue {
        object([
            ("id", .string(category.id)), ("name", .string(category.name)),
            ("iconName", .string(category.iconName)), ("categoryGroupId", .string(category.categoryGroupID)),
            ("createTime", category.createTime.map(timestamp)), ("updateTime", category.updateTime.map(timestamp)),
        ])
    }

    public static func mealRecord(_ meal: MealRecord) -> JSONValue {
        object([
            ("id", .string(meal.id)), ("name", .string(meal.name)), ("calories", .integer(Int64(meal.calories))),
            ("category", .string(meal.category.protoName)), ("eatenAt", meal.eatenAt.map(timestamp)),
            ("createTime", meal.createTime.map(timestamp)), ("updateTime", meal.updateTime.map(timestamp)),
        ])
    }

    public static func listLocations(_ response: ListLocationsResponse) -> JSONValue {
        object([("locations", .array(response.locations.map(location)))])
    }

    public static func listCategoryGroups(_ response: ListCategoryGroupsResponse) -> JSONValue {
        object([("categoryGroups", .array(response.categoryGroups.map(categoryGroup)))])
    }

    public static func listItemCategories(_ response: ListItemCategoriesResponse) -> JSONValue {
        object([("itemCategories", .array(response.itemCategories.map(itemCategory)))])
    }

    public static func listMealRecords(_ response: ListMealRecordsResponse) -> JSONValue {
        object([
            ("mealRecords", .array(response.mealRecords.map(mealRecord))),
            ("nextPageToken", .string(response.nextPageToken)),
        ])
    }

    public static func categoryTotal(_ total: CategoryTotal) -> JSONValue {
        object([
            ("category", .string(total.category.protoName)), ("totalCalories", int64(total.totalCalories)),
            ("mealCount", .integer(Int64(total.mealCount))),
        ])
    }

    public static func dailySummary(_ day: DailySummary) -> JSONValue {
        object([
            ("date", .string(day.date)), ("totalCalories", int64(day.totalCalories)),
            ("mealCount", .integer(Int64(day.mealCount))), ("categories", .array(day.categories.map(categoryTotal))),
        ])
    }

    public static func summary(_ response: SummarizeMealRecordsResponse) -> JSONValue {
        object([
            ("days", .array(response.days.map(dailySummary))), ("totalCalories", int64(response.totalCalories)),
            ("mealCount", .integer(Int64(response.mealCount))),
            ("categories", .array(response.categories.map(categoryTotal))),
        ])
    }

    public static func health(_ response: HealthCheckResponse) -> JSONValue {
        object([("status", .string(response.status.protoName))])
    }

    /// `google.protobuf.Empty`: `{}`.
    public static var empty: JSONValue { .object([]) }

    /// int64 and uint64 are JSON strings in the proto3 mapping.
    static func int64(_ value: Int64) -> JSONValue { .string(String(value)) }

    /// An object of the members whose value is not nil.
    static func object(_ members: [(String, JSONValue?)]) -> JSONValue {
        .object(members.compactMap { key, value in value.map { JSONValue.Member(key, $0) } })
    }
}
