import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

@Suite("Meal records over TCP", .offThePool)
struct MealRecordEndToEndTests {
    /// 2026-11-30T00:00:00Z
    static let day0: Int64 = 1_795_996_800

    @Test(arguments: Backend.all)
    func crudAndValidation(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let meal = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "Oatmeal", calories: 350, category: .breakfast,
                                       eatenAt: Timestamp(seconds: Self.day0 + 8 * 3600))))
            #expect(isLowercaseUUIDv4(meal.id))
            #expect(meal.eatenAt == Timestamp(seconds: Self.day0 + 8 * 3600))
            let now = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "Apple", calories: 80, category: .snack)))
            #expect(now.eatenAt != nil, "eaten_at defaults to the server's now")

            let updated = try await client.call(MealRecordMethods.updateMealRecord, UpdateMealRecordRequest(
                mealRecord: MealRecord(id: meal.id, calories: 420), updateMask: ["calories"]))
            #expect(updated.calories == 420 && updated.name == "Oatmeal" && updated.category == .breakfast)
            #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)) == updated)

            for bad in [MealRecord(name: "x", calories: -1, category: .lunch),
                        MealRecord(name: "x", calories: 100_001, category: .lunch),
                        MealRecord(name: "x", calories: 10, category: .unspecified),
                        MealRecord(name: "", calories: 10, category: .lunch)] {
                await expectStatus(.invalidArgument) {
                    try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(mealRecord: bad))
                }
            }
            // A category number this server does not know (a newer client's) is refused by name.
            do {
                _ = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: "x", calories: 10, category: .unrecognized(7))))
                Issue.record("category 7 was accepted")
            } catch let error as RPCError {
                #expect(error == RPCError(.invalidArgument, "meal_record.category: unknown MealCategory value 7"))
            }
            _ = try await client.call(MealRecordMethods.deleteMealRecord, DeleteMealRecordRequest(id: meal.id))
            await expectStatus(.notFound) {
                try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id))
            }
        }
    }

    @Test(arguments: Backend.all)
    func keysetPaginationNewestFirstWithFilters(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            // 30 meals, one per hour; every third is lunch.
            var created: [MealRecord] = []
            for hour in 0..<30 {
                created.append(try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: "Meal \(hour)", calories: Int32(100 + hour),
                                           category: hour % 3 == 0 ? .lunch : .dinner,
                                           eatenAt: Timestamp(seconds: Self.day0 + Int64(hour) * 3600)))))
            }
            var seen: [String] = []
            var token = ""
            var pages = 0
            repeat {
                let page = try await client.call(MealRecordMethods.listMealRecords,
                                                 ListMealRecordsRequest(pageSize: 7, pageToken: token))
                seen += page.mealRecords.map(\.id)
                token = page.nextPageToken
                pages += 1
                if pages == 2 {
                    // A newer meal inserted mid-walk must not shift the pages that follow.
                    _ = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                        mealRecord: MealRecord(name: "Late", calories: 1, category: .snack,
                                               eatenAt: Timestamp(seconds: Self.day0 + 100 * 3600))))
                }
            } while !token.isEmpty && pages < 20
            #expect(seen == created.reversed().map(\.id))

            let lunches = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(
                pageSize: 100, startTime: Timestamp(seconds: Self.day0 + 3 * 3600),
                endTime: Timestamp(seconds: Self.day0 + 12 * 3600), category: .lunch))
            #expect(lunches.mealRecords.map(\.name) == ["Meal 9", "Meal 6", "Meal 3"])
            #expect(lunches.nextPageToken.isEmpty)

            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(pageSize: -1))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(pageToken: "garbage!"))
            }
        }
    }

    @Test(arguments: Backend.all)
    func summaryPerLocalDayAndCategory(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            // 23:30Z on day 0 is 07:30 on day 1 at +08:00.
            let meals: [(Int64, Int32, MealCategory)] = [
                (Self.day0 + 1 * 3600, 300, .breakfast),   // day 0 09:00 +08
                (Self.day0 + 4 * 3600, 600, .lunch),       // day 0 12:00 +08
                (Self.day0 + 23 * 3600 + 1800, 250, .breakfast), // day 1 07:30 +08
            ]
            for (seconds, calories, category) in meals {
                _ = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: "m", calories: calories, category: category,
                                           eatenAt: Timestamp(seconds: seconds))))
            }
            let summary = try await client.call(MealRecordMethods.summarizeMealRecords, SummarizeMealRecordsRequest(
                startTime: Timestamp(seconds: Self.day0 - 86_400), endTime: Timestamp(seconds: Self.day0 + 2 * 86_400),
                utcOffsetMinutes: 480))
            #expect(summary.totalCalories == 1150 && summary.mealCount == 3)
            #expect(summary.days.map(\.date) == ["2026-11-30", "2026-12-01"])
            #expect(summary.days.map(\.totalCalories) == [900, 250])
            #expect(summary.days[0].categories == [CategoryTotal(category: .breakfast, totalCalories: 300, mealCount: 1),
                                                   CategoryTotal(category: .lunch, totalCalories: 600, mealCount: 1)])
            #expect(summary.categories == [CategoryTotal(category: .breakfast, totalCalories: 550, mealCount: 2),
                                           CategoryTotal(category: .lunch, totalCalories: 600, mealCount: 1)])
            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.summarizeMealRecords, SummarizeMealRecordsRequest(
                    startTime: Timestamp(seconds: Self.day0), endTime: Timestamp(seconds: Self.day0 - 1)))
            }
        }
    }
}
