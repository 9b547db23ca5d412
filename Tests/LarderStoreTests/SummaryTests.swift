import Foundation
import LarderAPI
import LarderStore
import LarderWire
import Testing

/// SummarizeMealRecords: local days at a client offset, categories, totals, and its argument rules.
///
/// Each test runs on a fresh database of every backend in `Backend.all`: the
/// static `@Test` opens the fixture and calls the instance method of the same name.
@Suite struct SummaryTests {
    let db: TestDatabase

    static func time(_ rfc3339: String) -> Timestamp {
        let seconds = ISO8601DateFormatter().date(from: rfc3339).map { Int64($0.timeIntervalSince1970) } ?? 0
        return Timestamp(seconds: seconds)
    }

    init(_ backend: Backend) throws {
        db = try TestDatabase(backend)
        let meals: [(String, Int32, MealCategory)] = [
            ("2026-11-29T00:00:00Z", 50, .dinner),      // +08: 11-29 08:00   -05: 11-28 19:00
            ("2026-11-29T15:59:59Z", 100, .snack),      // +08: 11-29 23:59   -05: 11-29 10:59
            ("2026-11-29T16:00:00Z", 300, .breakfast),  // +08: 11-30 00:00   -05: 11-29 11:00
            ("2026-11-30T04:00:00Z", 500, .lunch),      // +08: 11-30 12:00   -05: 11-29 23:00
            ("2026-11-30T04:30:00Z", 200, .lunch),      // +08: 11-30 12:30   -05: 11-29 23:30
            ("2026-11-30T05:00:00Z", 700, .dinner),     // +08: 11-30 13:00   -05: 11-30 00:00
            ("2026-12-01T00:00:00Z", 999, .snack),      // at end_time: excluded
            ("2026-11-28T23:59:59Z", 888, .snack),      // before start_time: excluded
        ]
        for (at, calories, category) in meals {
            _ = try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
                name: "meal", calories: calories, category: category, eatenAt: Self.time(at))))
        }
    }

    func summarize(offset: Int32) throws -> SummarizeMealRecordsResponse {
        try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: Self.time("2026-11-29T00:00:00Z"), endTime: Self.time("2026-12-01T00:00:00Z"),
            utcOffsetMinutes: offset))
    }

    static let overall = [
        CategoryTotal(category: .breakfast, totalCalories: 300, mealCount: 1),
        CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 2),
        CategoryTotal(category: .dinner, totalCalories: 750, mealCount: 2),
        CategoryTotal(category: .snack, totalCalories: 100, mealCount: 1),
    ]

    @Test(arguments: Backend.all)
    static func plusEightHours(backend: Backend) throws {
        try Self(backend).plusEightHours()
    }

    func plusEightHours() throws {
        let summary = try summarize(offset: 480)
        #expect(summary.days == [
            DailySummary(date: "2026-11-29", totalCalories: 150, mealCount: 2, categories: [
                CategoryTotal(category: .dinner, totalCalories: 50, mealCount: 1),
                CategoryTotal(category: .snack, totalCalories: 100, mealCount: 1),
            ]),
            DailySummary(date: "2026-11-30", totalCalories: 1700, mealCount: 4, categories: [
                CategoryTotal(category: .breakfast, totalCalories: 300, mealCount: 1),
                CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 2),
                CategoryTotal(category: .dinner, totalCalories: 700, mealCount: 1),
            ]),
        ])
        #expect(summary.categories == Self.overall)
        #expect(summary.totalCalories == 1850)
        #expect(summary.mealCount == 6)
    }

    @Test(arguments: Backend.all)
    static func minusFiveHours(backend: Backend) throws {
        try Self(backend).minusFiveHours()
    }

    func minusFiveHours() throws {
        let summary = try summarize(offset: -300)
        #expect(summary.days == [
            DailySummary(date: "2026-11-28", totalCalories: 50, mealCount: 1, categories: [
                CategoryTotal(category: .dinner, totalCalories: 50, mealCount: 1),
            ]),
            DailySummary(date: "2026-11-29", totalCalories: 1100, mealCount: 4, categories: [
                CategoryTotal(category: .breakfast, totalCalories: 300, mealCount: 1),
                CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 2),
                CategoryTotal(category: .snack, totalCalories: 100, mealCount: 1),
            ]),
            DailySummary(date: "2026-11-30", totalCalories: 700, mealCount: 1, categories: [
                CategoryTotal(category: .dinner, totalCalories: 700, mealCount: 1),
            ]),
        ])
        #expect(summary.categories == Self.overall)
        #expect(summary.totalCalories == 1850)
        #expect(summary.mealCount == 6)
    }

    @Test(arguments: Backend.all)
    static func emptyRangeHasNoDays(backend: Backend) throws {
        try Self(backend).emptyRangeHasNoDays()
    }

    func emptyRangeHasNoDays() throws {
        let summary = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: Self.time("2020-01-01T00:00:00Z"), endTime: Self.time("2020-01-02T00:00:00Z")))
        #expect(summary == SummarizeMealRecordsResponse())
    }

    @Test(arguments: Backend.all)
    static func datesBeforeTheEpochAreFloored(backend: Backend) throws {
        try Self(backend).datesBeforeTheEpochAreFloored()
    }

    func datesBeforeTheEpochAreFloored() throws {
        _ = try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
            name: "old", calories: 1, category: .lunch, eatenAt: Self.time("1969-12-31T23:30:00Z"))))
        let summary = try db.read(Operations.summarizeMealRecords, SummarizeMealRecordsRequest(
            startTime: Self.time("1969-12-31T00:00:00Z"), endTime: Self.time("1970-01-02T00:00:00Z"),
            utcOffsetMinutes: 0))
        #expect(summary.days.map(\.date) == ["1969-12-31"])
    }

    static let badRequests: [(SummarizeMealRecordsRequest, String)] = [
        (SummarizeMealRecordsRequest(endTime: time("2026-12-01T00:00:00Z")), "start_time is required"),
        (SummarizeMealRecordsRequest(startTime: time("2026-12-01T00:00:00Z")), "end_time is required"),
        (SummarizeMealRecordsRequest(startTime: time("2026-12-01T00:00:00Z"), endTime: time("2026-12-01T00:00:00Z")),
         "end_time must be after start_time"),
        (SummarizeMealRecordsRequest(startTime: time("2026-12-01T00:00:00Z"), endTime: time("2026-12-02T00:00:00Z"),
                                     utcOffsetMinutes: 841),
         "utc_offset_minutes must be between -840 and 840, got 841"),
        (SummarizeMealRecordsRequest(startTime: time("2026-12-01T00:00:00Z"), endTime: time("2026-12-02T00:00:00Z"),
                                     utcOffsetMinutes: -841),
         "utc_offset_minutes must be between -840 and 840, got -841"),
        (SummarizeMealRecordsRequest(startTime: time("2000-01-01T00:00:00Z"), endTime: time("2026-12-02T00:00:00Z")),
         "the range from start_time to end_time must be at most 3660 days"),
    ]

    /// The 3660-day bound holds to the nanosecond: exactly 3660 days is accepted, one
    /// nanosecond more is not, also inside one millisecond.
    @Test(arguments: [(Int32(0), true), (-1, true), (1, false), (999_999, false), (1_000_000, false)])
    static func theRangeBoundIsExactToTheNanosecond(extraNanos: Int32, accepted: Bool) throws {
        let db = try TestDatabase(.sqlite)
        let start = Timestamp(seconds: 1_700_000_000, nanos: 123_456_789)
        let span = Operations.maxSummaryDays * 86_400
        let nanos = Int64(start.nanos) + Int64(extraNanos)
        let end = Timestamp(seconds: start.seconds + span + nanos / 1_000_000_000, nanos: Int32(nanos % 1_000_000_000))
        let error = rpcError { try db.read(Operations.summarizeMealRecords,
                                           SummarizeMealRecordsRequest(startTime: start, endTime: end)) }
        #expect(error == (accepted ? nil : RPCError(.invalidArgument,
                                                    "the range from start_time to end_time must be at most 3660 days")),
                "end = start + 3660 days \(extraNanos >= 0 ? "+" : "-") \(abs(extraNanos)) ns")
    }

    @Test(arguments: badRequests)
    static func badArgumentsAreRejected(request: SummarizeMealRecordsRequest, message: String) throws {
        try Self(.sqlite).badArgumentsAreRejected(request: request, message: message)
    }

    func badArgumentsAreRejected(request: SummarizeMealRecordsRequest, message: String) throws {
        #expect(rpcError { try db.read(Operations.summarizeMealRecords, request) }
            == RPCError(.invalidArgument, message))
    }
}
