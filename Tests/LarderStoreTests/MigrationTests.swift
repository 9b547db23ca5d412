import CSQLite
import Foundation
import LarderAPI
@testable import LarderSQLite
import LarderStore
import LarderSystem
import LarderTestSupport
import LarderWire
import Testing

/// Schema versions in PRAGMA user_version, migrated in order on open.
@Suite struct MigrationTests {
    func userVersion(_ path: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        let statement = try connection.prepare("PRAGMA user_version")
        return try statement.step() ? statement.int64(at: 0) : -1
    }

    @Test func aVersionOneDatabaseIsMigratedKeepingItsRows() throws {
        let db = try TestDatabase()
        db.store.close()
        let path = db.directory.appendingPathComponent("v1.sqlite").path
        do {
            let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            try connection.execute(SQLiteSchema.migrations[0])
            try connection.execute("""
                INSERT INTO meal_records VALUES ('0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f', 'old', 10, 1, 0, 0, 0);
                PRAGMA user_version=1;
                """)
        }
        let store = try SQLiteStore.openAfterClose(path: path, options: .init(seed: true))
        let waiter = Waiter<MealRecord>()
        store.read({ r throws(RPCError) in
            try Operations.getMealRecord(GetMealRecordRequest(id: "0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f"), r)
        }, completion: waiter.finish)
        #expect(try waiter.wait().get().name == "old")
        // Version 4 stored each record's encoding: the old row got one while migrating.
        let page = Waiter<ListMealRecordsResponse>()
        store.read({ r throws(RPCError) in try Operations.listMealRecords(ListMealRecordsRequest(), r).decoded() },
                   completion: page.finish)
        #expect(try page.wait().get().mealRecords.map(\.name) == ["old"])
        let groups = Waiter<ListCategoryGroupsResponse>()
        store.read({ r throws(RPCError) in try Operations.listCategoryGroups(ListCategoryGroupsRequest(), r) },
                   completion: groups.finish)
        #expect(try groups.wait().get().categoryGroups.isEmpty, "an existing database must not be seeded")
        store.close()
        #expect(try userVersion(path) == Int64(SQLiteSchema.latestVersion))
    }

    @Test func aRecordWithoutItsStoredEncodingIsListedFromItsColumns() throws {
        let db = try TestDatabase()
        let created = try db.write({ (_: Void, w: any StoreWriter) throws(RPCError) -> [MealRecord] in
            try (0..<3).map { (i: Int) throws(RPCError) -> MealRecord in
                try Operations.createMealRecord(CreateMealRecordRequest(mealRecord: MealRecord(
                    name: "meal \(i)", calories: Int32(i), category: .lunch,
                    eatenAt: Timestamp(seconds: 1_800_000_000 + Int64(i)))), w).message
            }
        }, ())
        try db.closeAndExecute("UPDATE meal_records SET encoding = NULL WHERE name = 'meal 1'")
        let store = try SQLiteStore.openAfterClose(path: db.path, options: .init())
        let page = Waiter<ListMealRecordsResponse>()
        store.read({ r throws(RPCError) in try Operations.listMealRecords(ListMealRecordsRequest(), r).decoded() },
                   completion: page.finish)
        #expect(try page.wait().get().mealRecords == created.reversed())
        store.close()
    }

    @Test func aNewerSchemaIsRefused() throws {
        let db = try TestDatabase()
        try db.closeAndExecute("PRAGMA user_version=99")
        let error = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains("schema version 99 is newer than this build supports") == true)
    }

    /// A damaged header (user_version with its top bit set) is refused with a message, not a trap.
    @Test func aNegativeSchemaVersionIsRefused() throws {
        let db = try TestDatabase()
        try db.closeAndExecute("PRAGMA user_version=-1")
        let error = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains("schema version -1 (the file's user_version) is not one larder writes") == true,
                "\(String(describing: error))")
    }

    /// A version stamp that does not match the tables: the failed upgrade says so.
    @Test func aVersionStampBehindItsTablesIsRefusedWithTheCause() throws {
        let db = try TestDatabase()
        try db.closeAndExecute("PRAGMA user_version=3")
        let error = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains("upgrading it from schema version 3 to \(SQLiteSchema.latestVersion) failed") == true,
                "\(String(describing: error))")
        #expect(try userVersion(db.path) == 3, "left as it was")
    }

    /// A table dropped by hand: refused at start, instead of SERVING and failing every call on it.
    @Test func aLatestDatabaseMissingATableIsRefused() throws {
        let db = try TestDatabase()
        try db.closeAndExecute("DROP TABLE locations")
        let error = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains("lacks locations") == true, "\(String(describing: error))")
        let readOnly = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init(readOnly: true)) }
        #expect(readOnly?.message.contains("lacks locations") == true, "\(String(describing: readOnly))")
    }

    /// Another application's SQLite file holding a table of our names is refused, naming it,
    /// and left as it was (still in its own journal mode, no table of ours added).
    @Test func aFileHoldingForeignTablesOfOurNamesIsRefusedUntouched() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-foreign")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("other.sqlite").path
        do {
            let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            try connection.execute("CREATE TABLE meal_records (x); CREATE TABLE notes (y)")
            connection.close()
        }
        let error = rpcError { try SQLiteStore.openAfterClose(path: path, options: .init()) }
        #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
        #expect(error?.message == "database \"\(path)\": it already holds meal_records, which larder did not create "
                + "(its user_version is 0): give larder a file of its own", "\(String(describing: error))")
        // Nothing is left beside it: the empty WAL file the lock created before opening is gone again.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["other.sqlite"], "\(files)")
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        let mode = try connection.prepare("PRAGMA journal_mode")
        #expect(try mode.step() && mode.string(at: 0) == "delete")
        let tables = try connection.prepare("SELECT count(*) FROM sqlite_master")
        #expect(try tables.step() && tables.int64(at: 0) == 2)
    }

    /// The names checked are the ones the migrations really create.
    @Test func theRelationNamesAreTheMigrationsOwn() throws {
        let names = SQLiteStore.relationNames
        for name in ["category_groups", "category_groups_name", "locations", "locations_name", "meal_records",
                     "meal_records_category_eaten_at", "item_categories_group_name"] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(!names.contains("ON") && !names.contains("UNIQUE") && !names.contains("IF"))
    }

    /// A file system without room is refused before anything is created on it: SQLite would
    /// die of SIGBUS growing its memory-mapped WAL index there.
    @Test func aFileSystemWithoutRoomIsRefusedBeforeAnythingIsCreated() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-room")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        var options = SQLiteStore.Options()
        options.minimumFreeBytes = .max
        let error = rpcError { try SQLiteStore.openAfterClose(path: path, options: options) }
        #expect(error?.code == .resourceExhausted, "\(String(describing: error))")
        #expect(error?.message.contains("bytes free, and larder-server needs at least \(UInt64.max) to start") == true,
                "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(error?.message.hasSuffix("free some space, but not by deleting \(path)-wal: it may hold acknowledged "
                                         + "writes the database file does not have yet") == true,
                "audit 30 F2: the WAL is the largest file there")
    }

    /// Under the WAL's working size free, the store opens and says so (audit 30 F2: on a 40 MB
    /// file system the WAL filled it within seconds, with no word at start).
    @Test func lowFreeSpaceIsToldAtOpen() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-room")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        let told = LockedValue<[UInt64]>([])
        var options = SQLiteStore.Options()
        options.lowFreeSpaceBytes = .max
        options.onLowFreeSpace = { free in told.withLock { $0.append(free) } }
        try SQLiteStore.open(path: path, options: options).close()
        #expect(told.withLock { $0 }.count == 1)
        #expect(told.withLock { $0 }.allSatisfy { $0 > 1 << 20 }, "the free bytes, above the 1 MiB needed to open")
        options.lowFreeSpaceBytes = 0
        try SQLiteStore.openAfterClose(path: path, options: options).close()
        #expect(told.withLock { $0 }.count == 1, "not told with room to spare")
    }

    /// A database file with another hard link is told at open (audit 30 F3: a server started on
    /// the link used another WAL, missed the writes in this one, and lost its own later).
    @Test func aHardLinkedDatabaseFileIsToldAtOpen() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-links")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        let told = LockedValue<[Int]>([])
        var options = SQLiteStore.Options()
        options.onHardLinks = { links in told.withLock { $0.append(links) } }
        try SQLiteStore.open(path: path, options: options).close()
        #expect(told.withLock { $0 }.isEmpty, "a new file has one link")
        #expect(link(path, directory.appendingPathComponent("other.sqlite").path) == 0)
        try SQLiteStore.openAfterClose(path: path, options: options).close()
        #expect(told.withLock { $0 } == [2])
    }
}
