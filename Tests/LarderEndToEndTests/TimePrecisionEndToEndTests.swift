import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// Through the real server: nanosecond eaten_at, summaries in an IANA zone, byte-capped names.
@Suite("Meal times over TCP")
struct TimePrecisionEndToEndTests {
    @Test(arguments: Backend.all)
    func nanosecondsTimeZonesAndByteCaps(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            // 2026-11-01T04:30:00.123456789Z: 00:30 EDT on Nov 1 in New York.
            let at = Timestamp(seconds: 1_793_507_400, nanos: 123_456_789)
            let meal = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "Late snack", calories: 200, category: .snack, eatenAt: at)))
            #expect(meal.eatenAt == at)
            #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)).eatenAt == at)
            let after = Timestamp(seconds: at.seconds, nanos: at.nanos + 1)
            let none = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(startTime: after))
            #expect(none.mealRecords.isEmpty)
            let one = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(endTime: after))
            #expect(one.mealRecords.map(\.id) == [meal.id])

            let summary = try await client.call(MealRecordMethods.summarizeMealRecords, SummarizeMealRecordsRequest(
                startTime: Timestamp(seconds: 1_793_000_000), endTime: Timestamp(seconds: 1_794_000_000),
                timeZone: "America/New_York"))
            #expect(summary.days.map(\.date) == ["2026-11-01"])
            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.summarizeMealRecords, SummarizeMealRecordsRequest(
                    startTime: Timestamp(seconds: 1_793_000_000), endTime: Timestamp(seconds: 1_794_000_000),
                    timeZone: "Nowhere/Special"))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: "a" + String(repeating: "\u{301}", count: 500), calories: 1,
                                           category: .snack)))
            }
        }
    }
}
