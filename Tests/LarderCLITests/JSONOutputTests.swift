import Foundation
import LarderAPI
import LarderCLI
import LarderJSON
import LarderWire
import Testing

/// `--json` output: the reply message through LarderJSON, every scalar and repeated field printed.
@Suite("JSON output")
struct JSONOutputTests {
    /// A command and the reply the fake server gives it.
    struct Case: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let reply: any ProtoMessage
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let noon = Timestamp(seconds: 1_795_996_800 + 12 * 3600)

    static let cases: [Case] = [
        Case(arguments: ["locations", "get", "b1b2c3d4-0000-4000-8000-000000000001"],
             reply: Location(id: "b1b2c3d4-0000-4000-8000-000000000001", name: "客廳", colorHex: "#FF5733", createTime: Timestamp(seconds: 0),
                             updateTime: Timestamp(seconds: 1_795_996_800, nanos: 120_000_000))),
        Case(arguments: ["locations", "list"],
             reply: ListLocationsResponse(locations: [Location(id: "b1b2c3d4-0000-4000-8000-000000000001", name: "玄關", colorHex: "#AABBCC"),
                                                      Location(id: "l2")])),
        Case(arguments: ["meals", "get", "a1b2c3d4-0000-4000-8000-000000000001"],
             reply: MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000001", name: "拉麵", calories: 700, category: .dinner, eatenAt: noon,
                               createTime: noon, updateTime: Timestamp(seconds: 1_795_996_800 + 12 * 3600, nanos: 1))),
        Case(arguments: ["meals", "get", "a1b2c3d4-0000-4000-8000-000000000002"], reply: MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000002")),
        Case(arguments: ["groups", "get", "c1b2c3d4-0000-4000-8000-000000000001", "--with-categories"],
             reply: CategoryGroup(id: "c1b2c3d4-0000-4000-8000-000000000001", name: "食品", colorHex: "#34C759",
                                  itemCategories: [ItemCategory(id: "d1b2c3d4-0000-4000-8000-000000000001", name: "蔬果", iconName: "leaf.fill",
                                                                categoryGroupID: "c1b2c3d4-0000-4000-8000-000000000001")])),
        Case(arguments: ["categories", "list"],
             reply: ListItemCategoriesResponse(itemCategories: [ItemCategory(id: "d1b2c3d4-0000-4000-8000-000000000001", categoryGroupID: "c1b2c3d4-0000-4000-8000-000000000001")])),
        Case(arguments: ["meals", "summary", "--since", "2026-11-30", "--until", "2026-12-01"],
             reply: SummarizeMealRecordsResponse(
                days: [DailySummary(date: "2026-11-30", totalCalories: 5_000_000_000, mealCount: 2,
                                    categories: [CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)])],
                totalCalories: 5_000_000_000, mealCount: 2)),
        Case(arguments: ["locations", "delete", "b1b2c3d4-0000-4000-8000-000000000001"], reply: Empty()),
        Case(arguments: ["health"], reply: HealthCheckResponse(status: .notServing)),
    ]

    /// What LarderJSON prints for `message` from its protobuf bytes, with default values.
    static func protoJSON(_ message: some ProtoMessage) throws -> String {
        try ProtoJSON.json(fromBinary: ProtoCodec.encode(message),
                           type: type(of: message).descriptor,
                           options: ProtoJSON.Options(emitDefaults: true)).rendered()
    }

    @Test("--json prints exactly ProtoJSON's rendering of the reply, defaults included", arguments: cases)
    func sameAsProtoJSON(_ test: Case) async throws {
        let result = try await CLIRunner.run(test.arguments + ["--json"], replying: test.reply)
        #expect(result.stderr == "")
        #expect(result.stdout == (try Self.protoJSON(test.reply)))
    }

    @Test("default values are printed: zeros, empty strings and lists, the UNSPECIFIED enum; unset timestamps are not")
    func defaults() async throws {
        let meal = try await CLIRunner.run(["meals", "get", "a1b2c3d4-0000-4000-8000-000000000001", "--json"], replying: MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000001"))
        #expect(meal.stdout == """
            {
              "id": "a1b2c3d4-0000-4000-8000-000000000001",
              "name": "",
              "calories": 0,
              "category": "MEAL_CATEGORY_UNSPECIFIED"
            }

            """)
        let group = try await CLIRunner.run(["groups", "get", "c1b2c3d4-0000-4000-8000-000000000001", "--json"],
                                            replying: CategoryGroup(id: "c1b2c3d4-0000-4000-8000-000000000001", name: "食品", colorHex: "#34C759"))
        let json = try JSONParser.parse(group.stdout)
        #expect(json["colorHex"] == .string("#34C759"))
        #expect(json["createTime"] == nil)
    }

    @Test("groups without --with-categories leave out itemCategories instead of printing []")
    func groupsWithoutCategories() async throws {
        let category = ItemCategory(id: "d1b2c3d4-0000-4000-8000-000000000001", name: "蔬果",
                                    categoryGroupID: "c1b2c3d4-0000-4000-8000-000000000001")
        let group = CategoryGroup(id: "c1b2c3d4-0000-4000-8000-000000000001", name: "食品", colorHex: "#34C759")
        let list = try await CLIRunner.run(["groups", "list", "--json"],
                                           replying: ListCategoryGroupsResponse(categoryGroups: [group]))
        let listed = try #require(try JSONParser.parse(list.stdout)["categoryGroups"]?.arrayValue?.first)
        #expect(listed["name"] == .string("食品"))
        #expect(listed["itemCategories"] == nil)
        var filled = group
        filled.itemCategories = [category]
        let get = try await CLIRunner.run(["groups", "get", group.id, "--json"], replying: filled)
        #expect(try JSONParser.parse(get.stdout)["itemCategories"] == nil)
        let with = try await CLIRunner.run(["groups", "get", group.id, "--with-categories", "--json"], replying: group)
        #expect(try JSONParser.parse(with.stdout)["itemCategories"] == .array([]))
    }

    @Test("call prints default values with --json, as every command does, and leaves them out without it")
    func callWithJSON() async throws {
        let request = #"{"mealRecord": {"name": "Water", "calories": 0, "category": "MEAL_CATEGORY_SNACK"}}"#
        let meal = MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000001", name: "Water", calories: 0, category: .snack)
        for arguments in [["--json"], ["-o", "json"], ["--emit-defaults"]] {
            // After the command: --emit-defaults is an option of call, not a global one.
            let run = try await CLIRunner.run(["call", "/larder.v1.MealRecordService/CreateMealRecord",
                                               "-d", request] + arguments, replying: meal)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try JSONParser.parse(run.stdout)["calories"] == .number("0"), "\(arguments)")
        }
        let plain = try await CLIRunner.run(["call", "/larder.v1.MealRecordService/CreateMealRecord", "-d", request],
                                            replying: meal)
        #expect(try JSONParser.parse(plain.stdout)["calories"] == nil)
        #expect(try JSONParser.parse(plain.stdout)["name"] == .string("Water"))
    }

    @Test("int64 totals are strings, int32 counts numbers, enums names, timestamps RFC 3339 UTC")
    func mapping() async throws {
        let meal = MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000001", name: "飯糰", calories: 0, category: .snack,
                              eatenAt: Timestamp(seconds: 1_795_996_800, nanos: 500_000_000))
        let mealRun = try await CLIRunner.run(["meals", "get", "a1b2c3d4-0000-4000-8000-000000000001", "--json"], replying: meal)
        let mealJSON = try JSONParser.parse(mealRun.stdout)
        #expect(mealJSON["category"] == .string("MEAL_CATEGORY_SNACK"))
        #expect(mealJSON["eatenAt"] == .string("2026-11-30T00:00:00.500Z"))
        #expect(mealJSON["calories"] == .number("0"))

        let summary = SummarizeMealRecordsResponse(
            days: [DailySummary(date: "2026-11-30", totalCalories: 5_000_000_000, mealCount: 2)],
            totalCalories: 5_000_000_000, mealCount: 2,
            categories: [CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)])
        let json = try JSONParser.parse(try await CLIRunner.run(
            ["meals", "summary", "--since", "2026-11-30", "--until", "2026-12-01", "--json"], replying: summary).stdout)
        #expect(json["totalCalories"] == .string("5000000000"))
        #expect(json["mealCount"] == .number("2"))
        #expect(json["days"]?.arrayValue?.first?["categories"] == .array([]))
        #expect(json["categories"] == .array([.object([.init("category", .string("MEAL_CATEGORY_LUNCH")),
                                                       .init("totalCalories", .string("700")),
                                                       .init("mealCount", .number("1"))])]))
    }

    @Test("rendered JSON parses back with Foundation, escapes and CJK text intact")
    func rendering() async throws {
        let group = CategoryGroup(id: "c1b2c3d4-0000-4000-8000-000000000001", name: "食品 \"quoted\"\n\\ \u{1}", colorHex: "#34C759",
                                  createTime: Timestamp(seconds: 0))
        let text = try await CLIRunner.run(["groups", "get", "c1b2c3d4-0000-4000-8000-000000000001", "--json"], replying: group).stdout
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\\u0001"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(parsed["name"] as? String == group.name)
        #expect(parsed["createTime"] as? String == "1970-01-01T00:00:00Z")
        #expect(parsed["updateTime"] == nil)
    }

    @Test("meals list --all prints the pages merged into one ListMealRecordsResponse")
    func mergedPages() async throws {
        let pages = [
            ListMealRecordsResponse(
                mealRecords: [MealRecord(id: "a", calories: 1, category: .lunch, eatenAt: Self.noon)],
                nextPageToken: "p2"),
            ListMealRecordsResponse(mealRecords: [MealRecord(id: "b"), MealRecord(id: "c", name: "湯")],
                                    nextPageToken: ""),
        ]
        let server = try FakeServer()
        let result = try await CLIRunner.run(["meals", "list", "--all", "--json"], server: server) { requests in
            for page in pages {
                let request = try #require(await requests.next())
                server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(page)))
            }
        }
        #expect(result.status == 0)
        let merged = ListMealRecordsResponse(mealRecords: pages.flatMap(\.mealRecords), nextPageToken: "")
        #expect(result.stdout == (try Self.protoJSON(merged)))
    }

    @Test("a reply with no JSON form (a timestamp after 9999) is INTERNAL, nothing on stdout")
    func unrepresentable() async throws {
        let meal = MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000001", eatenAt: Timestamp(seconds: TimestampRange.maxSeconds + 1))
        let result = try await CLIRunner.run(["meals", "get", "a1b2c3d4-0000-4000-8000-000000000001", "--json"], replying: meal)
        #expect(result.status == ExitCode.forStatus(.internal))
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("INTERNAL: larder.v1.MealRecord does not convert to JSON: eatenAt: timestamp "))
    }
}
