import Foundation
import LarderAPI
import LarderCLI
import Testing

@Suite("JSON output")
struct JSONOutputTests {
    @Test("a meal record uses lowerCamelCase names, enum names and RFC 3339 UTC")
    func mealRecord() {
        let meal = MealRecord(id: "m1", name: "飯糰", calories: 0, category: .snack,
                              eatenAt: Timestamp(seconds: 1_795_996_800, nanos: 500_000_000))
        let json = JSONOutput.mealRecord(meal)
        #expect(json == .object([
            .init("id", .string("m1")), .init("name", .string("飯糰")), .init("calories", .integer(0)),
            .init("category", .string("MEAL_CATEGORY_SNACK")), .init("eatenAt", .string("2026-11-30T00:00:00.500Z")),
        ]))
    }

    @Test("int64 totals are strings, int32 counts are numbers")
    func summary() throws {
        let response = SummarizeMealRecordsResponse(
            days: [DailySummary(date: "2026-11-30", totalCalories: 5_000_000_000, mealCount: 2,
                                categories: [CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)])],
            totalCalories: 5_000_000_000, mealCount: 2,
            categories: [CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)])
        let json = JSONOutput.summary(response)
        #expect(json["totalCalories"] == .string("5000000000"))
        #expect(json["mealCount"] == .integer(2))
        guard case .array(let days) = json["days"], let day = days.first else {
            Issue.record("no days in \(json)")
            return
        }
        #expect(day["date"] == .string("2026-11-30"))
        guard case .array(let categories) = day["categories"], let lunch = categories.first else {
            Issue.record("no categories in \(day)")
            return
        }
        #expect(lunch == .object([.init("category", .string("MEAL_CATEGORY_LUNCH")),
                                  .init("totalCalories", .string("700")), .init("mealCount", .integer(1))]))
    }

    @Test("rendered JSON parses back, with escapes and CJK text intact")
    func rendering() throws {
        let group = CategoryGroup(id: "g1", name: "食品 \"quoted\"\n\\ \u{1}", colorHex: "#34C759",
                                  createTime: Timestamp(seconds: 0),
                                  itemCategories: [ItemCategory(id: "c1", name: "蔬果", iconName: "leaf.fill",
                                                                categoryGroupID: "g1")])
        let text = JSONOutput.categoryGroup(group).rendered()
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\\u0001"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(parsed["name"] as? String == group.name)
        #expect(parsed["colorHex"] as? String == "#34C759")
        #expect(parsed["createTime"] as? String == "1970-01-01T00:00:00Z")
        #expect(parsed["updateTime"] == nil)
        let categories = try #require(parsed["itemCategories"] as? [[String: Any]])
        #expect(categories.first?["categoryGroupId"] as? String == "g1")
        #expect(categories.first?["iconName"] as? String == "leaf.fill")
        #expect(JSONOutput.empty.rendered() == "{}\n")
        #expect(JSONOutput.listLocations(ListLocationsResponse(locations: [])).rendered() == "{\n  \"locations\": []\n}\n")
    }
}
