import CSQLite
import Foundation
import LarderAPI
import LarderSQLite
import LarderStore
import LarderWire
import Testing

/// A damaged database is DATA_LOSS (PROTOCOL.md §5): unrecoverable, not INTERNAL or UNAVAILABLE.
@Suite struct CorruptionTests {
    /// A leaf page of the meal table overwritten with garbage: the open still succeeds (it
    /// reads only the category index), the calls that read the page fail with DATA_LOSS,
    /// and calls that do not touch it keep working.
    @Test func aCorruptPageOfTheMealTableIsDataLoss() throws {
        let db = try TestDatabase(seed: true)
        _ = try db.write({ (_: Void, w: any StoreWriter) throws(RPCError) -> Int in
            for i in 0..<2000 {
                _ = try Operations.createMealRecord(CreateMealRecordRequest(mealRecord: MealRecord(
                    name: "meal number \(i) with a name long enough to fill pages", calories: 1, category: .lunch,
                    eatenAt: Timestamp(seconds: 1_800_000_000 + Int64(i)))), w)
            }
            return 0
        }, ())
        db.store.close()  // checkpoints: every page is in the database file

        let (page, pageSize) = try {
            let connection = try SQLiteConnection(path: db.path, flags: SQLITE_OPEN_READONLY)
            let leaf = try connection.prepare(
                "SELECT pageno FROM dbstat WHERE name = 'meal_records' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 3")
            let size = try connection.prepare("PRAGMA page_size")
            guard try leaf.step(), try size.step() else { throw RPCError.internalError("no leaf page") }
            return (leaf.int64(at: 0), size.int64(at: 0))
        }()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: db.path))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        handle.write(Data(repeating: 0xFF, count: Int(pageSize)))
        try handle.close()

        try db.reopen(seed: false)
        var error: RPCError?
        var token = ""
        for _ in 0..<100 {
            do {
                let next = try db.read(Operations.listMealRecords, ListMealRecordsRequest(pageSize: 1000, pageToken: token))
                token = next.nextPageToken
                if token.isEmpty { break }
            } catch let failure {
                error = failure
                break
            }
        }
        #expect(error?.code == .dataLoss, "\(String(describing: error))")
        #expect(error?.message.contains("the database file is damaged") == true)
        // Other tables are still served.
        #expect(try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest()).categoryGroups.count == 9)
    }
}
