import LarderTestSupport
import CSQLite
import Foundation
import LarderAPI
@testable import LarderPostgres
@testable import LarderSQLite
import LarderStore
import LarderWire
import Testing

/// Databases from before eaten_at kept nanoseconds (SQLite schema 5, PostgreSQL version 1)
/// are migrated keeping their rows, their order and their stored encodings.
@Suite struct PrecisionMigrationTests {
    static let ids = ["0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f", "1f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f",
                      "2f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f"]
    /// Two in one millisecond (ids break the tie), one a millisecond later.
    static let old: [MealRecord] = [
        MealRecord(id: ids[0], name: "first", calories: 1, category: .lunch,
                   eatenAt: Timestamp(unixMilliseconds: 1_800_000_000_123),
                   createTime: Timestamp(unixMilliseconds: 5), updateTime: Timestamp(unixMilliseconds: 6)),
        MealRecord(id: ids[1], name: "second", calories: 2, category: .dinner,
                   eatenAt: Timestamp(unixMilliseconds: 1_800_000_000_123),
                   createTime: Timestamp(unixMilliseconds: 5), updateTime: Timestamp(unixMilliseconds: 6)),
        MealRecord(id: ids[2], name: "third", calories: 3, category: .snack,
                   eatenAt: Timestamp(unixMilliseconds: 1_800_000_000_124),
                   createTime: Timestamp(unixMilliseconds: 5), updateTime: Timestamp(unixMilliseconds: 6)),
    ]

    static func page(_ store: any Store, _ request: ListMealRecordsRequest) throws -> ListMealRecordsResponse {
        let waiter = Waiter<ListMealRecordsResponse>()
        store.read({ r throws(RPCError) in try Operations.listMealRecords(request, r).decoded() },
                   completion: waiter.finish)
        return try waiter.wait().get()
    }

    static func create(_ store: any Store, _ record: MealRecord) throws -> MealRecord {
        let waiter = Waiter<MealRecord>()
        store.write({ w throws(RPCError) in
            try Operations.createMealRecord(CreateMealRecordRequest(mealRecord: record), w).message
        }, completion: waiter.finish)
        return try waiter.wait().get()
    }

    /// What every migrated store must show: the old rows in order, paged, then a new
    /// record within their millisecond ordered by its nanoseconds.
    static func checkMigrated(_ store: any Store) throws {
        let newestFirst = [old[2], old[1], old[0]]
        #expect(try page(store, ListMealRecordsRequest()).mealRecords == newestFirst)
        var walked: [MealRecord] = []
        var token = ""
        repeat {
            let next = try page(store, ListMealRecordsRequest(pageSize: 1, pageToken: token))
            walked += next.mealRecords
            token = next.nextPageToken
        } while !token.isEmpty && walked.count < 10
        #expect(walked == newestFirst)
        let get = Waiter<MealRecord>()
        store.read({ r throws(RPCError) in try Operations.getMealRecord(GetMealRecordRequest(id: ids[1]), r) },
                   completion: get.finish)
        #expect(try get.wait().get() == old[1])

        let between = try create(store, MealRecord(name: "between", calories: 4, category: .lunch,
                                                   eatenAt: Timestamp(seconds: 1_800_000_000, nanos: 123_500_000)))
        #expect(try page(store, ListMealRecordsRequest()).mealRecords.map(\.name)
                == ["third", "between", "second", "first"])
        #expect(between.eatenAt == Timestamp(seconds: 1_800_000_000, nanos: 123_500_000))
    }

    @Test func aSchemaFiveSQLiteDatabaseIsMigratedKeepingOrderAndEncodings() throws {
        let db = try TestDatabase()
        db.store.close()
        let path = db.directory.appendingPathComponent("v5.sqlite").path
        do {
            let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            for migration in SQLiteSchema.migrations[0..<5] { try connection.execute(migration) }
            let insert = try connection.prepare("INSERT INTO meal_records VALUES (?1, ?2, ?3, ?4, ?5, 5, 6, ?6)")
            for record in Self.old {
                try insert.bind(record.id, at: 1)
                try insert.bind(record.name, at: 2)
                try insert.bind(Int64(record.calories), at: 3)
                try insert.bind(Int64(record.category.rawValue), at: 4)
                try insert.bind(record.eatenAt?.unixMilliseconds ?? 0, at: 5)
                try insert.bind(blob: ProtoCodec.encode(record), at: 6)
                try insert.run()
                insert.reset()
            }
            try connection.execute("PRAGMA user_version=5")
        }
        let store = try SQLiteStore.openAfterClose(path: path, options: .init())
        try Self.checkMigrated(store)
        store.close()

        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        let version = try connection.prepare("PRAGMA user_version")
        #expect(try version.step() && version.int64(at: 0) == Int64(SQLiteSchema.latestVersion))
        // The clustered key keeps its order, to the nanosecond, and stays ascending.
        let key = try connection.prepare("SELECT sql FROM sqlite_master WHERE name = 'meal_records'")
        #expect(try key.step() && key.string(at: 0).contains("PRIMARY KEY (eaten_at_ms, eaten_at_ns, id)"))
        // The old rows' stored encodings are the ones they had (their times were whole milliseconds).
        let encodings = try connection.prepare("SELECT encoding FROM meal_records WHERE eaten_at_ns = 0 ORDER BY id")
        var stored: [[UInt8]] = []
        while try encodings.step() { stored.append(encodings.withBlob(at: 0) { $0.map { Array($0) } ?? [] }) }
        #expect(stored == Self.old.map { ProtoCodec.encode($0) })
    }

    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, "LARDER_TEST_POSTGRES_URL is not set"))
    func aVersionOnePostgresDatabaseIsMigratedKeepingItsRows() throws {
        let database = try PostgresTestDatabase()
        do {
            let connection = try PostgresConnection(url: database.url)
            defer { connection.close() }
            _ = try connection.execute(PostgresSchema.migrationsTable)
            _ = try connection.execute(PostgresSchema.migrations[0])
            _ = try connection.execute("INSERT INTO schema_migrations VALUES (1, 0)")
            for record in Self.old {
                _ = try connection.query(
                    "INSERT INTO meal_records VALUES ($1, $2, $3, $4, $5, 5, 6)",
                    [.text(record.id), .text(record.name), .int64(Int64(record.calories)),
                     .int64(Int64(record.category.rawValue)), .int64(record.eatenAt?.unixMilliseconds ?? 0)])
            }
        }
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false))
        try Self.checkMigrated(store)
        store.close()
    }
}
