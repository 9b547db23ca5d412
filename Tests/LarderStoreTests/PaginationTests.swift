import LarderAPI
import LarderStore
import LarderWire
import Testing

/// ListMealRecords: order, filters, page sizes and keyset page tokens.
///
/// Each test runs on a fresh database of every backend in `Backend.all`: the
/// static `@Test` opens the fixture and calls the instance method of the same name.
@Suite struct PaginationTests {
    let db: TestDatabase
    static let base: Int64 = 1_800_000_000

    init(_ backend: Backend) throws { db = try TestDatabase(backend) }

    /// Inserts meals in one write; meal `i` is eaten at base + (i / 3) minutes, so ids break ties.
    func insertMeals(_ range: Range<Int>, offsetSeconds: Int64 = 0) throws -> [MealRecord] {
        try db.write({ (range: Range<Int>, writer: any StoreWriter) throws(RPCError) -> [MealRecord] in
            var meals: [MealRecord] = []
            for index in range {
                let category: MealCategory = [.breakfast, .lunch, .dinner, .snack][index % 4]
                meals.append(try Operations.createMealRecord(CreateMealRecordRequest(mealRecord: MealRecord(
                    name: "meal \(index)", calories: Int32(index), category: category,
                    eatenAt: Timestamp(seconds: Self.base + offsetSeconds + Int64(index / 3) * 60))), writer).message)
            }
            return meals
        }, range)
    }

    static func isNewestFirst(_ a: MealRecord, _ b: MealRecord) -> Bool {
        let (ta, tb) = (a.eatenAt?.unixMilliseconds ?? 0, b.eatenAt?.unixMilliseconds ?? 0)
        return ta != tb ? ta > tb : a.id > b.id
    }

    @Test(arguments: Backend.all)
    static func walkingPagesWhileOthersInsertNeitherSkipsNorRepeats(backend: Backend) throws {
        try Self(backend).walkingPagesWhileOthersInsertNeitherSkipsNorRepeats()
    }

    func walkingPagesWhileOthersInsertNeitherSkipsNorRepeats() throws {
        let original = try insertMeals(0..<250)
        var seen: [MealRecord] = []
        var token = ""
        var pages = 0
        repeat {
            let page = try db.read(listMeals, ListMealRecordsRequest(pageSize: 40, pageToken: token))
            #expect(page.mealRecords.count <= 40)
            seen += page.mealRecords
            token = page.nextPageToken
            pages += 1
            // Others insert between pages: newer than everything, and older than everything.
            _ = try insertMeals(1000 + pages * 2..<1002 + pages * 2, offsetSeconds: 86_400)
            _ = try insertMeals(2000 + pages * 2..<2002 + pages * 2, offsetSeconds: -86_400)
        } while !token.isEmpty && pages < 100

        let ids = seen.map(\.id)
        #expect(Set(ids).count == ids.count, "a row was returned twice")
        #expect(Set(original.map(\.id)).isSubset(of: Set(ids)), "a row that existed before the walk was skipped")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { Self.isNewestFirst($0, $1) })
        // Older rows inserted before the last page lie ahead of the cursor, so they are seen too;
        // newer ones lie behind it and are not.
        #expect(seen.filter { $0.name.hasPrefix("meal 2") && $0.name.count == 9 }.count == 2 * (pages - 1))
        #expect(!seen.contains { $0.name.hasPrefix("meal 1") && $0.name.count == 9 })
        #expect(pages == 7)
    }

    @Test(arguments: Backend.all)
    static func pageSizesDefaultAndAreCapped(backend: Backend) throws {
        try Self(backend).pageSizesDefaultAndAreCapped()
    }

    func pageSizesDefaultAndAreCapped() throws {
        _ = try insertMeals(0..<1005)
        let first = try db.read(listMeals, ListMealRecordsRequest())
        #expect(first.mealRecords.count == 50)
        #expect(!first.nextPageToken.isEmpty)
        let capped = try db.read(listMeals, ListMealRecordsRequest(pageSize: 5000))
        #expect(capped.mealRecords.count == 1000)
        let rest = try db.read(listMeals,
                               ListMealRecordsRequest(pageSize: 1000, pageToken: capped.nextPageToken))
        #expect(rest.mealRecords.count == 5)
        #expect(rest.nextPageToken.isEmpty)
        #expect(rpcError { try db.read(listMeals, ListMealRecordsRequest(pageSize: -1)) }
            == RPCError(.invalidArgument, "page_size must not be negative, got -1"))
    }

    @Test(arguments: Backend.all)
    static func filtersSelectRangeAndCategory(backend: Backend) throws {
        try Self(backend).filtersSelectRangeAndCategory()
    }

    func filtersSelectRangeAndCategory() throws {
        let meals = try insertMeals(0..<40)
        let start = Timestamp(seconds: Self.base + 3 * 60)   // meals 9...
        let end = Timestamp(seconds: Self.base + 10 * 60)    // ...up to 29
        let expected = meals.filter { meal in
            guard let at = meal.eatenAt else { return false }
            return at >= start && at < end && meal.category == .lunch
        }.sorted(by: Self.isNewestFirst)
        #expect(!expected.isEmpty)

        var collected: [MealRecord] = []
        var token = ""
        repeat {
            let page = try db.read(listMeals, ListMealRecordsRequest(
                pageSize: 2, pageToken: token, startTime: start, endTime: end, category: .lunch))
            collected += page.mealRecords
            token = page.nextPageToken
        } while !token.isEmpty && collected.count <= meals.count
        #expect(collected == expected)
    }

    @Test
    static func tokensAreBoundToTheirFilters() throws {
        try Self(.sqlite).tokensAreBoundToTheirFilters()
    }

    func tokensAreBoundToTheirFilters() throws {
        _ = try insertMeals(0..<10)
        let first = try db.read(listMeals, ListMealRecordsRequest(pageSize: 2, category: .lunch))
        let token = first.nextPageToken
        #expect(!token.isEmpty)
        // The same filters with another page size are fine.
        _ = try db.read(listMeals, ListMealRecordsRequest(pageSize: 1, pageToken: token, category: .lunch))

        let others: [ListMealRecordsRequest] = [
            ListMealRecordsRequest(pageSize: 3, pageToken: token),
            ListMealRecordsRequest(pageSize: 3, pageToken: token, category: .dinner),
            ListMealRecordsRequest(pageSize: 3, pageToken: token, startTime: Timestamp(seconds: 0), category: .lunch),
            ListMealRecordsRequest(pageSize: 3, pageToken: token, endTime: Timestamp(seconds: Self.base * 2),
                                   category: .lunch),
        ]
        for request in others {
            let error = rpcError { try db.read(listMeals, request) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.hasPrefix("page_token was issued for other filters") == true)
        }
    }

    @Test(arguments: ["garbage", "AAAA", "!!!!", String(repeating: "A", count: 44), "a"])
    static func garbageTokensAreInvalid(token: String) throws {
        try Self(.sqlite).garbageTokensAreInvalid(token: token)
    }

    func garbageTokensAreInvalid(token: String) throws {
        let error = rpcError { try db.read(listMeals, ListMealRecordsRequest(pageToken: token)) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("page_token") == true)
    }

    /// A token of another length is refused on its length, before it is decoded (a 4 MB one
    /// took a reader ~30 ms); a token of the right length that is not one, after.
    @Test(arguments: [4_000_000, 51, 49, 1])
    static func tokensOfAnotherLengthAreRefusedOnTheirLength(length: Int) throws {
        let db = try Self(.sqlite).db
        let token = String(repeating: "A", count: length)
        let error = rpcError { try db.read(listMeals, ListMealRecordsRequest(pageToken: token)) }
        #expect(error == RPCError(.invalidArgument, "page_token is not valid: it is \(length) bytes, a page token is 50; "
                                  + "pass the next_page_token of a previous page"))
        let forged = rpcError { try db.read(listMeals, ListMealRecordsRequest(pageToken: String(repeating: "A", count: 50))) }
        #expect(forged == RPCError(.invalidArgument, "page_token is not valid; pass the next_page_token of a previous page"))
    }

    @Test
    static func rangeMustNotBeEmpty() throws {
        try Self(.sqlite).rangeMustNotBeEmpty()
    }

    func rangeMustNotBeEmpty() throws {
        let time = Timestamp(seconds: Self.base)
        #expect(rpcError {
            try db.read(listMeals, ListMealRecordsRequest(startTime: time, endTime: time))
        } == RPCError(.invalidArgument, "end_time must be after start_time"))
    }
}

/// ListMealRecords as a client sees it: the stored encodings, decoded.
private func listMeals(_ request: ListMealRecordsRequest, _ db: any StoreReader) throws(RPCError)
    -> ListMealRecordsResponse
{
    try Operations.listMealRecords(request, db).decoded()
}
