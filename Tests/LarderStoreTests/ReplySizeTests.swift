import LarderAPI
import LarderStore
import LarderWire
import Testing

/// One user's data cannot break reads for everyone: names are capped in bytes, and a
/// page of whatever is stored fits one frame.
@Suite struct ReplySizeTests {
    let db: TestDatabase

    init(_ backend: Backend) throws { db = try TestDatabase(backend) }

    func create(_ name: String, at seconds: Int64 = 1_800_000_000) throws(RPCError) -> MealRecord {
        try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
            name: name, calories: 1, category: .lunch, eatenAt: Timestamp(seconds: seconds))))
    }

    @Test static func namesAreCappedInBytesAsWellAsCharacters() throws {
        let db = try TestDatabase()
        let create = { (name: String) throws(RPCError) -> MealRecord in
            try db.write(Operations.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
                name: name, calories: 1, category: .lunch)))
        }
        // One grapheme of 1,401 bytes: "a" and 700 combining acute accents (within the 1,600
        // bytes a name may have before trimming, so the 400-byte cap after it is what refuses it).
        let zalgo = "a" + String(repeating: "\u{301}", count: 700)
        #expect(zalgo.count == 1)
        let error = rpcError { try create(zalgo) }
        #expect(error == RPCError(.invalidArgument,
                                  "meal_record.name must be at most 400 bytes of UTF-8 after trimming, got 1401"))
        // 100 characters of 4 bytes each is the most, and allowed.
        let emoji = String(repeating: "🍜", count: 100)
        #expect(try create(emoji).name == emoji)
        #expect(try create(String(repeating: "飯", count: 100)).name.utf8.count == 300)
        #expect(rpcError { try create(String(repeating: "飯", count: 101)) }?.code == .invalidArgument)
        // Locations, groups and item categories share the rule.
        let location = rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: zalgo, colorHex: "#112233")))
        }
        #expect(location?.message.contains("location.name must be at most 400 bytes") == true)
    }

    @Test(arguments: Backend.all)
    static func aPageOfHugeStoredRecordsEndsEarlyWithAToken(backend: Backend) throws {
        try Self(backend).aPageOfHugeStoredRecordsEndsEarlyWithAToken(backend)
    }

    /// Names written before the byte cap (here by raw SQL): 1.5 MB each, so only two fit a
    /// 4 MiB page; and one of 5 MB, which no reply can hold.
    func aPageOfHugeStoredRecordsEndsEarlyWithAToken(_ backend: Backend) throws {
        var ids: [String] = []
        for index in 0..<5 { ids.append(try create("meal \(index)", at: 1_800_000_000 + Int64(index)).id) }
        let huge = { (bytes: Int) in
            backend == .sqlite ? "replace(hex(zeroblob(\(bytes / 2))), '0', 'x')" : "repeat('x', \(bytes))"
        }
        let clearEncoding = backend == .sqlite ? ", encoding = NULL" : ""
        try db.closeAndExecuteRaw("""
            UPDATE meal_records SET name = \(huge(1_500_000))\(clearEncoding) WHERE id IN ('\(ids[0])', '\(ids[1])', '\(ids[3])');
            UPDATE meal_records SET name = \(huge(5_000_000))\(clearEncoding) WHERE id = '\(ids[2])';
            """)
        try db.reopen(seed: false)

        var pages: [[String]] = []
        var token = ""
        repeat {
            let page = try db.read(Operations.listMealRecords, ListMealRecordsRequest(pageSize: 50, pageToken: token))
            #expect(ProtoCodec.encode(page).count <= Operations.maxPageBytes)
            pages.append(try page.decoded().mealRecords.map(\.id))
            token = page.nextPageToken
        } while !token.isEmpty && pages.count < 10
        // Newest first: 4 (small), 3, 1 and 0 (1.5 MB each, at most two to a page); 2 (5 MB) is
        // left out. Where the first page ends depends on where the backend stopped reading.
        #expect(pages.flatMap { $0 } == [ids[4], ids[3], ids[1], ids[0]])
        #expect(pages.count == 2)

        let get = rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: ids[2])) }
        #expect(get?.code == .resourceExhausted)
        #expect(get?.message.contains("meal record \(ids[2]) is") == true)
        // Shortening its name makes it readable and listed again.
        var fixed = MealRecord(id: ids[2], name: "fixed")
        fixed.calories = 1
        _ = try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
            mealRecord: fixed, updateMask: FieldMask(paths: ["name"])))
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: ids[2])).name == "fixed")
    }
}
