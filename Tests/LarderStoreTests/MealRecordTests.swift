import LarderAPI
import LarderStore
import LarderWire
import Testing

/// Each test runs on a fresh database of every backend in `Backend.all`: the
/// static `@Test` opens the fixture and calls the instance method of the same name.
@Suite struct MealRecordTests {
    let db: TestDatabase
    init(_ backend: Backend) throws { db = try TestDatabase(backend) }

    func create(_ record: MealRecord) throws -> MealRecord {
        try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: record))
    }

    @Test(arguments: Backend.all)
    static func createKeepsNanosecondsAndDefaultsEatenAtToNow(backend: Backend) throws {
        try Self(backend).createKeepsNanosecondsAndDefaultsEatenAtToNow()
    }

    func createKeepsNanosecondsAndDefaultsEatenAtToNow() throws {
        let exact = try create(MealRecord(name: "Oatmeal", calories: 350, category: .breakfast,
                                          eatenAt: Timestamp(seconds: 1_795_000_000, nanos: 123_456_789)))
        #expect(exact.eatenAt == Timestamp(seconds: 1_795_000_000, nanos: 123_456_789))
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: exact.id)) == exact)
        let listed = try db.read(Operations.listMealRecords, ListMealRecordsRequest()).decoded().mealRecords
        #expect(listed == [exact])
        // Before 1970 and at the edges of the valid years, too.
        for time in [Timestamp(seconds: -1, nanos: 999_999_999), Timestamp(seconds: -62_135_596_800, nanos: 1),
                     Timestamp(seconds: 253_402_300_799, nanos: 999_999_999)] {
            let record = try create(MealRecord(name: "Edge", calories: 1, category: .snack, eatenAt: time))
            #expect(record.eatenAt == time)
            #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: record.id)).eatenAt == time)
        }
        var moved = exact
        moved.eatenAt = Timestamp(seconds: 1_795_000_000, nanos: 123_456_790)
        let updated = try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
            mealRecord: moved, updateMask: FieldMask(paths: ["eaten_at"])))
        #expect(updated.eatenAt == moved.eatenAt)
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: exact.id)).eatenAt == moved.eatenAt)

        let now = try create(MealRecord(name: "Snack", calories: 0, category: .snack))
        let eatenAt = try #require(now.eatenAt)
        #expect(eatenAt == now.createTime)
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: now.id)).eatenAt == eatenAt)
    }

    @Test(arguments: Backend.all, [Int32(0), 1, 99_999, 100_000])
    static func caloriesInRangeAreAccepted(backend: Backend, calories: Int32) throws {
        try Self(backend).caloriesInRangeAreAccepted(calories: calories)
    }

    func caloriesInRangeAreAccepted(calories: Int32) throws {
        #expect(try create(MealRecord(name: "M", calories: calories, category: .lunch)).calories == calories)
    }

    @Test(arguments: [Int32(-1), 100_001, .min, .max])
    static func caloriesOutOfRangeAreRejected(calories: Int32) throws {
        try Self(.sqlite).caloriesOutOfRangeAreRejected(calories: calories)
    }

    func caloriesOutOfRangeAreRejected(calories: Int32) throws {
        #expect(rpcError { try create(MealRecord(name: "M", calories: calories, category: .lunch)) }
            == RPCError(.invalidArgument, "meal_record.calories must be between 0 and 100000, got \(calories)"))
    }

    @Test
    static func unspecifiedCategoryIsRejected() throws {
        try Self(.sqlite).unspecifiedCategoryIsRejected()
    }

    func unspecifiedCategoryIsRejected() throws {
        let error = rpcError { try create(MealRecord(name: "M", calories: 1, category: .unspecified)) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("meal_record.category is required") == true)
    }

    @Test
    static func unrecognizedCategoryIsRejectedNamingTheField() throws {
        try Self(.sqlite).unrecognizedCategoryIsRejectedNamingTheField()
    }

    /// Enums decode open, so the store, not the decoder, refuses a number it does not know.
    func unrecognizedCategoryIsRejectedNamingTheField() throws {
        #expect(rpcError { try create(MealRecord(name: "M", calories: 1, category: .unrecognized(7))) }
            == RPCError(.invalidArgument, "meal_record.category: unknown MealCategory value 7"))
        let meal = try create(MealRecord(name: "M", calories: 1, category: .lunch))
        let update = UpdateMealRecordRequest(mealRecord: MealRecord(id: meal.id, category: .unrecognized(-1)),
                                             updateMask: FieldMask(paths: ["category"]))
        #expect(rpcError { try db.write(Operations.updateMealRecord, update) }
            == RPCError(.invalidArgument, "meal_record.category: unknown MealCategory value -1"))
        #expect(rpcError { try db.read(Operations.listMealRecords, ListMealRecordsRequest(category: .unrecognized(9))) }
            == RPCError(.invalidArgument, "category: unknown MealCategory value 9"))
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: meal.id)).category == .lunch)
    }

    static let badTimes: [(Timestamp, String)] = [
        (Timestamp(seconds: 0, nanos: -1), "nanos"),
        (Timestamp(seconds: 0, nanos: 1_000_000_000), "nanos"),
        (Timestamp(seconds: 253_402_300_800), "years 1-9999"),
        (Timestamp(seconds: -62_135_596_801), "years 1-9999"),
    ]

    @Test(arguments: badTimes)
    static func invalidTimestampsAreRejected(time: Timestamp, fragment: String) throws {
        try Self(.sqlite).invalidTimestampsAreRejected(time: time, fragment: fragment)
    }

    func invalidTimestampsAreRejected(time: Timestamp, fragment: String) throws {
        let error = rpcError { try create(MealRecord(name: "M", calories: 1, category: .lunch, eatenAt: time)) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("meal_record.eaten_at") == true)
        #expect(error?.message.contains(fragment) == true)
    }

    @Test(arguments: Backend.all)
    static func extremeValidTimesRoundTrip(backend: Backend) throws {
        try Self(backend).extremeValidTimesRoundTrip()
    }

    func extremeValidTimesRoundTrip() throws {
        for seconds in [Int64(-62_135_596_800), 253_402_300_799] {
            let record = try create(MealRecord(name: "M", calories: 1, category: .lunch,
                                               eatenAt: Timestamp(seconds: seconds, nanos: 999_000_000)))
            #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: record.id)).eatenAt
                == Timestamp(seconds: seconds, nanos: 999_000_000))
        }
    }

    @Test(arguments: Backend.all)
    static func updateHonoursTheMask(backend: Backend) throws {
        try Self(backend).updateHonoursTheMask()
    }

    func updateHonoursTheMask() throws {
        let meal = try create(MealRecord(name: "Rice", calories: 200, category: .lunch,
                                         eatenAt: Timestamp(seconds: 1_800_000_000)))
        let updated = try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
            mealRecord: MealRecord(id: meal.id, name: "ignored", calories: 250, category: .dinner),
            updateMask: ["calories", "category"]))
        #expect(updated.name == "Rice" && updated.calories == 250 && updated.category == .dinner)
        #expect(updated.eatenAt == meal.eatenAt && updated.createTime == meal.createTime)
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: meal.id)) == updated)

        #expect(rpcError {
            try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
                mealRecord: MealRecord(id: meal.id, name: "X", calories: 1, category: .lunch)))
        } == RPCError(.invalidArgument, "meal_record.eaten_at is required when the update mask covers it"))
        #expect(rpcError {
            try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
                mealRecord: MealRecord(id: meal.id, calories: -5), updateMask: ["calories"]))
        }?.code == .invalidArgument)
        #expect(rpcError {
            try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
                mealRecord: MealRecord(id: meal.id), updateMask: ["create_time"]))
        } == RPCError(.invalidArgument, "update_mask path \"create_time\" cannot be updated; "
                      + "allowed paths: name, calories, category, eaten_at"))

        let moved = try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
            mealRecord: MealRecord(id: meal.id, name: "Curry", calories: 700, category: .dinner,
                                   eatenAt: Timestamp(seconds: 1_800_000_100))))
        #expect(moved.name == "Curry" && moved.eatenAt == Timestamp(seconds: 1_800_000_100))

        _ = try db.write(Operations.deleteMealRecord, DeleteMealRecordRequest(id: meal.id))
        #expect(rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: meal.id)) }?.code
            == .notFound)
    }
}
