import LarderAPI
import LarderStore
import LarderWire
import Testing

/// eaten_at to the nanosecond: filters, order, page tokens and summary bounds, on every backend.
@Suite struct PrecisionTests {
    let db: TestDatabase
    /// 2026-11-15T00:00:00Z.
    static let base: Int64 = 1_795_132_800

    init(_ backend: Backend) throws { db = try TestDatabase(backend) }

    func create(_ name: String, _ seconds: Int64, _ nanos: Int32) throws -> MealRecord {
        try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
            name: name, calories: 100, category: .lunch, eatenAt: Timestamp(seconds: seconds, nanos: nanos))))
    }

    func names(start: Timestamp? = nil, end: Timestamp? = nil) throws -> [String] {
        try db.read(Operations.listMealRecords, ListMealRecordsRequest(startTime: start, endTime: end))
            .decoded().mealRecords.map(\.name)
    }

    @Test(arguments: Backend.all)
    static func timeFiltersCompareToTheNanosecond(backend: Backend) throws {
        try Self(backend).timeFiltersCompareToTheNanosecond()
    }

    /// The example: a meal at T+0.123 s.
    func timeFiltersCompareToTheNanosecond() throws {
        _ = try create("meal", Self.base, 123_000_000)
        let t = { (nanos: Int32) in Timestamp(seconds: Self.base, nanos: nanos) }
        #expect(try names(start: t(123_500_000)) == [], "start_time after the meal")
        #expect(try names(start: t(123_000_001)) == [])
        #expect(try names(start: t(123_000_000)) == ["meal"], "start_time is inclusive")
        #expect(try names(end: t(123_000_001)) == ["meal"], "end_time one nanosecond after")
        #expect(try names(end: t(123_000_000)) == [], "end_time is exclusive")
        #expect(try names(start: t(122_999_999), end: t(123_000_001)) == ["meal"])

        let summary = { (start: Timestamp, end: Timestamp) throws -> Int32 in
            try db.read(Operations.summarizeMealRecords,
                        SummarizeMealRecordsRequest(startTime: start, endTime: end)).mealCount
        }
        #expect(try summary(t(0), t(123_000_001)) == 1)
        #expect(try summary(t(0), t(123_000_000)) == 0)
        #expect(try summary(t(123_000_001), t(999_999_999)) == 0)
        #expect(try summary(t(123_000_000), t(999_999_999)) == 1)
    }

    @Test(arguments: Backend.all)
    static func mealsWithinOneMillisecondAreOrderedAndPagedByTheirNanoseconds(backend: Backend) throws {
        try Self(backend).mealsWithinOneMillisecondAreOrderedAndPagedByTheirNanoseconds()
    }

    func mealsWithinOneMillisecondAreOrderedAndPagedByTheirNanoseconds() throws {
        // Created out of order; ids are random, so only the nanoseconds can order them.
        for (name, nanos) in [("c", Int32(5_000_500)), ("a", 5_000_001), ("d", 5_999_999), ("b", 5_000_002),
                              ("e", 6_000_000), ("before", 4_999_999)] {
            _ = try create(name, Self.base, nanos)
        }
        let expected = ["e", "d", "c", "b", "a", "before"]
        #expect(try names() == expected)

        var walked: [String] = []
        var token = ""
        repeat {
            let page = try db.read(Operations.listMealRecords, ListMealRecordsRequest(pageSize: 1, pageToken: token))
                .decoded()
            walked += page.mealRecords.map(\.name)
            token = page.nextPageToken
        } while !token.isEmpty && walked.count < 20
        #expect(walked == expected)

        // A page within the millisecond, ending one nanosecond after "b".
        let window = try names(start: Timestamp(seconds: Self.base, nanos: 5_000_000),
                               end: Timestamp(seconds: Self.base, nanos: 5_000_003))
        #expect(window == ["b", "a"])
    }

    @Test(arguments: Backend.all)
    static func aPageTokenCarriesTheFiltersToTheNanosecond(backend: Backend) throws {
        try Self(backend).aPageTokenCarriesTheFiltersToTheNanosecond()
    }

    func aPageTokenCarriesTheFiltersToTheNanosecond() throws {
        for index in 0..<3 { _ = try create("m\(index)", Self.base + Int64(index), 0) }
        let start = Timestamp(seconds: Self.base - 10, nanos: 1)
        let page = try db.read(Operations.listMealRecords, ListMealRecordsRequest(pageSize: 1, startTime: start))
        #expect(!page.nextPageToken.isEmpty)
        let other = ListMealRecordsRequest(pageSize: 1, pageToken: page.nextPageToken,
                                           startTime: Timestamp(seconds: Self.base - 10, nanos: 2))
        #expect(rpcError { try db.read(Operations.listMealRecords, other) }?.code == .invalidArgument)
    }
}
