import LarderAPI
import LarderWire

/// Non-trivial sample values shared by the tests.
enum Fixtures {
    static let created = Timestamp(seconds: 1_717_000_000, nanos: 123_000_000)
    static let updated = Timestamp(seconds: 1_717_086_400, nanos: 999_999_999)
    /// Present but all-zero: must stay present, not turn into nil.
    static let epoch = Timestamp(seconds: 0)
    static let beforeEpoch = Timestamp(seconds: -86_400, nanos: 5)

    static let location = Location(id: "0d6f1c9e-3b7a-4f7e-9a53-8b1f4c2d6e70", name: "厨房の棚 🥫",
                                   colorHex: "#1A2B3C", createTime: created, updateTime: updated)

    static let rice = ItemCategory(id: "5b0c5d0e-8a8e-4b8f-a1c2-0f3e5d7c9b11", name: "米・穀物", iconName: "leaf.fill",
                                   categoryGroupID: "a1b2c3d4-0000-4000-8000-000000000001",
                                   createTime: created, updateTime: nil)
    static let tea = ItemCategory(id: "5b0c5d0e-8a8e-4b8f-a1c2-0f3e5d7c9b12", name: "茶叶 / 차",
                                  iconName: "cup.and.saucer", categoryGroupID: "a1b2c3d4-0000-4000-8000-000000000001",
                                  createTime: nil, updateTime: epoch)

    static let food = CategoryGroup(id: "a1b2c3d4-0000-4000-8000-000000000001", name: "食品", colorHex: "#FF8800",
                                    createTime: created, updateTime: updated, itemCategories: [rice, tea])
    static let furniture = CategoryGroup(id: "a1b2c3d4-0000-4000-8000-000000000002", name: "家具",
                                         colorHex: "#00AA55")

    static let breakfast = MealRecord(id: "c0ffee00-0000-4000-8000-000000000001", name: "味噌汁と御飯",
                                      calories: 450, category: .breakfast, eatenAt: created,
                                      createTime: created, updateTime: updated)
    static let snack = MealRecord(id: "c0ffee00-0000-4000-8000-000000000002", name: "떡볶이", calories: 100_000,
                                  category: .snack, eatenAt: beforeEpoch)

    static let lunchTotal = CategoryTotal(category: .lunch, totalCalories: 1_250, mealCount: 2)
    static let snackTotal = CategoryTotal(category: .snack, totalCalories: 5_000_000_000, mealCount: Int32.max)

    /// One value of every message type in LarderAPI, each with non-default fields.
    static let allMessages: [any ProtoMessage & Hashable] = [
        location,
        CreateLocationRequest(location: location),
        GetLocationRequest(id: location.id),
        ListLocationsRequest(),
        ListLocationsResponse(locations: [location, Location(name: "地下室")]),
        UpdateLocationRequest(location: location, updateMask: ["name", "color_hex"]),
        DeleteLocationRequest(id: location.id),

        rice,
        CreateItemCategoryRequest(itemCategory: rice),
        GetItemCategoryRequest(id: rice.id),
        ListItemCategoriesRequest(categoryGroupID: food.id),
        ListItemCategoriesResponse(itemCategories: [rice, tea]),
        UpdateItemCategoryRequest(itemCategory: tea, updateMask: ["name", "icon_name", "category_group_id"]),
        DeleteItemCategoryRequest(id: tea.id),

        food,
        CreateCategoryGroupRequest(categoryGroup: food),
        GetCategoryGroupRequest(id: food.id, includeItemCategories: true),
        ListCategoryGroupsRequest(),
        ListCategoryGroupsResponse(categoryGroups: [food, furniture]),
        UpdateCategoryGroupRequest(categoryGroup: furniture, updateMask: ["color_hex"]),
        DeleteCategoryGroupRequest(id: food.id, cascade: true),

        breakfast,
        CreateMealRecordRequest(mealRecord: snack),
        GetMealRecordRequest(id: breakfast.id),
        ListMealRecordsRequest(pageSize: 1000, pageToken: "eyJvIjoxMH0=", startTime: beforeEpoch, endTime: updated,
                               category: .dinner),
        ListMealRecordsResponse(mealRecords: [breakfast, snack], nextPageToken: "next-ページ"),
        UpdateMealRecordRequest(mealRecord: breakfast, updateMask: ["name", "calories", "category", "eaten_at"]),
        DeleteMealRecordRequest(id: snack.id),
        SummarizeMealRecordsRequest(startTime: created, endTime: updated, utcOffsetMinutes: -840),
        lunchTotal,
        DailySummary(date: "2024-05-29", totalCalories: 1_700, mealCount: 3, categories: [lunchTotal, snackTotal]),
        SummarizeMealRecordsResponse(
            days: [DailySummary(date: "2024-05-29", totalCalories: 1_250, mealCount: 2, categories: [lunchTotal]),
                   DailySummary(date: "2024-05-30", totalCalories: 5_000_000_000, mealCount: Int32.max,
                                categories: [snackTotal])],
            totalCalories: 5_000_001_250, mealCount: Int32.max, categories: [lunchTotal, snackTotal]),

        HealthCheckRequest(service: "larder.v1.MealRecordService"),
        HealthCheckResponse(status: .notServing),
        Timestamp(seconds: -62_135_596_800, nanos: 1),
        Empty(),
    ]
}
