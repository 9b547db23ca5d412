import CSQLite
import Foundation
import LarderAPI
@testable import LarderSQLite
import LarderStore
import LarderSystem
import LarderTestSupport
import LarderWire
import Testing

/// The files of a SQLite database under a running store: its WAL deleted, a symbolic link for
/// a path, another process reading at close, another application's file (audit 21).
@Suite(.offThePool) struct DatabaseFilesTests {
    private static func create(_ name: String, in store: SQLiteStore) -> Result<String, RPCError> {
        let waiter = Waiter<String>()
        store.write({ w throws(RPCError) in
            try Operations.createLocation(CreateLocationRequest(location: Location(name: name, colorHex: "#000000")), w).id
        }, completion: waiter.finish)
        return waiter.wait()
    }

    /// The rows of `table` in the database file at `path` alone: a copy of it, without its WAL.
    private static func rowsInFileAlone(_ path: String, table: String) throws -> Int64 {
        let directory = try makeTemporaryDirectory(prefix: "larder-copy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let connection = try SQLiteConnection(path: copy, flags: SQLITE_OPEN_READONLY)
        defer { connection.close() }
        let count = try connection.prepare("SELECT count(*) FROM \(table)")
        return try count.step() ? count.int64(at: 0) : -1
    }

    /// A WAL deleted under the store (the writes acknowledged since the last checkpoint live only
    /// there): writes are refused from then on, and what it held is copied into the database
    /// file, so a crash after it loses nothing. Before, the store went on acknowledging writes
    /// into the unlinked WAL, and a kill -9 lost all of them (audit 21 M1).
    @Test func aDeletedWALIsCopiedIntoTheDatabaseAndWritesStop() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-wal-deleted")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        let moved = LockedValue<[String]>([])
        let copied = DispatchSemaphore(value: 0)
        var options = SQLiteStore.Options(seed: false)
        options.idleCheckpointMilliseconds = 0  // nothing copies the WAL but the loss
        options.onFileMoved = { reason in moved.withLock { $0.append(reason) } }
        options.onLostWALCopied = { copied.signal() }
        try SQLiteStore.openAfterClose(path: path, options: options).close()  // the tables, in the file
        let store = try SQLiteStore.openAfterClose(path: path, options: options)
        defer { store.close() }
        for index in 0..<50 { _ = try Self.create("room \(index)", in: store).get() }
        #expect(try Self.rowsInFileAlone(path, table: "locations") == 0, "the test needs the rows in the WAL only")

        #expect(unlink(path + "-wal") == 0)
        let refused = Self.create("after", in: store)
        guard case .failure(let error) = refused else {
            Issue.record("a write after the WAL was deleted was acknowledged: \(refused)")
            return
        }
        #expect(error.code == .unavailable)
        #expect(error.message.contains("the WAL file \"\(path)-wal\" was deleted, renamed or replaced"), "\(error)")
        #expect(!store.isAvailable)
        #expect(moved.withLock { $0.count } == 1)
        #expect(copied.wait(timeout: .now() + 120) == .success, "the deleted WAL was copied")
        #expect(try Self.rowsInFileAlone(path, table: "locations") == 50)
    }

    /// A path through a symbolic link is the link's target for every file and lock: SQLite
    /// keeps its WAL beside the target, and the WAL's lock on `<link>-wal` let a second server
    /// start on the target's WAL (audit 21 M2). A link to a missing file creates its target.
    @Test func aSymbolicLinkIsResolvedForTheFileTheWALAndTheirLocks() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-link")
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = directory.appendingPathComponent("real.sqlite").path
        let link = directory.appendingPathComponent("link.sqlite").path
        #expect(symlink("real.sqlite", link) == 0)  // relative, as `ln -s` makes it
        let store = try SQLiteStore.openAfterClose(path: link, options: .init(seed: false))
        #expect(store.path == Self.realPath(real))
        #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
        #expect(FileManager.default.fileExists(atPath: real + "-wal"))
        let second = rpcError { try SQLiteStore.open(path: real, options: .init(seed: false)) }
        #expect(second?.code == .failedPrecondition, "\(String(describing: second))")
        store.close()

        let dangling = directory.appendingPathComponent("dangling.sqlite").path
        #expect(symlink(directory.appendingPathComponent("made.sqlite").path, dangling) == 0)
        let made = try SQLiteStore.openAfterClose(path: dangling, options: .init(seed: false))
        #expect(made.path == Self.realPath(directory.path) + "/made.sqlite")
        made.close()
    }

    private static func realPath(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// Closing copies the whole WAL into the database file; when another process's read
    /// transaction holds it back past `closeCheckpointMilliseconds`, closing says so, naming the
    /// WAL to keep (it said nothing, and "stop the server, copy the file" lost writes: audit 21 M3).
    @Test func aCloseThatCannotCopyTheWALSaysWhatIsLeftWhere() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-close")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        let reports = LockedValue<[String]>([])
        var options = SQLiteStore.Options(seed: false)
        options.idleCheckpointMilliseconds = 0
        options.closeCheckpointMilliseconds = 200
        options.onCloseCheckpointIncomplete = { problem in reports.withLock { $0.append(problem) } }

        // Nothing holds it back: all copied, nothing said.
        let quiet = try SQLiteStore.openAfterClose(path: path, options: options)
        for index in 0..<20 { _ = try Self.create("room \(index)", in: quiet).get() }
        quiet.close()
        #expect(reports.withLock { $0 }.isEmpty)
        #expect(try Self.rowsInFileAlone(path, table: "locations") == 20)

        // A reader whose snapshot is older than the last writes: the WAL cannot be copied past it.
        let store = try SQLiteStore.openAfterClose(path: path, options: options)
        for index in 20..<30 { _ = try Self.create("room \(index)", in: store).get() }
        let reader = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        defer { reader.close() }
        try reader.execute("BEGIN")
        let count = try reader.prepare("SELECT count(*) FROM locations")
        #expect(try count.step() && count.int64(at: 0) == 30)
        for index in 30..<40 { _ = try Self.create("room \(index)", in: store).get() }
        store.close()
        let said = reports.withLock { $0 }
        #expect(said.count == 1)
        #expect(said.first?.contains("another process holds a read transaction") == true, "\(said)")
        #expect(said.first?.contains("stay in \(path)-wal") == true, "\(said)")
        #expect(try Self.rowsInFileAlone(path, table: "locations") < 40, "the WAL holds what the file lacks")
        count.reset()
        try reader.execute("COMMIT")
    }

    /// Another application's SQLite file (tables of other names, user_version 0) is refused
    /// untouched: it was adopted, seeded and switched to WAL mode (audit 21 L1).
    @Test func anotherApplicationsDatabaseIsRefusedUntouched() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-foreign")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.sqlite").path
        do {
            let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            try connection.execute("CREATE TABLE notes (body TEXT); CREATE INDEX notes_body ON notes (body)")
            connection.close()
        }
        let error = rpcError { try SQLiteStore.openAfterClose(path: path, options: .init()) }
        #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
        #expect(error?.message == "database \"\(path)\": it is another application's database (it holds notes, "
                + "notes_body, and larder never opened it: its user_version is 0); give larder a file of its own",
                "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.sqlite"])
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        defer { connection.close() }
        let mode = try connection.prepare("PRAGMA journal_mode")
        #expect(try mode.step() && mode.string(at: 0) == "delete")
    }

    /// A path that names a file of another kind, or a directory, is a mistake to correct, not a
    /// damaged database to restore (DATA_LOSS) nor a hard-linked one: refused before anything is
    /// created beside it (audit 35 L2, L5). An empty file is a new database, as SQLite has it.
    @Test func aFileThatIsNotADatabaseOrADirectoryIsRefusedUntouched() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-not-a-db")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("passwd").path
        let text = Data("root:x:0:0:root:/root:/bin/bash\n".utf8)
        try text.write(to: URL(fileURLWithPath: path))
        let hardLinks = LockedValue<[Int]>([])
        var options = SQLiteStore.Options()
        options.onHardLinks = { links in hardLinks.withLock { $0.append(links) } }
        let error = rpcError { try SQLiteStore.openAfterClose(path: path, options: options) }
        #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
        #expect(error?.message == "database \"\(path)\": it is not a SQLite database (it does not start with SQLite's "
                + "header), so it was left as it was; check the path", "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["passwd"])

        let subdirectory = directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: false)
        let directoryError = rpcError { try SQLiteStore.openAfterClose(path: subdirectory.path, options: options) }
        #expect(directoryError?.code == .invalidArgument, "\(String(describing: directoryError))")
        #expect(directoryError?.message == "database \"\(subdirectory.path)\": it is a directory; name a file in it")
        #expect(hardLinks.withLock { $0 }.isEmpty, "no hard-link warning for a directory's links")

        let empty = directory.appendingPathComponent("empty.sqlite").path
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        let store = try SQLiteStore.openAfterClose(path: empty, options: .init(seed: false))
        store.close()
    }

    /// Opening tells what it migrated: a new file from version 0, an up-to-date one nothing.
    @Test func openingSaysWhatItMigrated() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-migrated")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        let migrations = LockedValue<[[Int]]>([])
        var options = SQLiteStore.Options(seed: false)
        options.onMigrated = { from, to, _ in migrations.withLock { $0.append([from, to]) } }
        try SQLiteStore.openAfterClose(path: path, options: options).close()
        try SQLiteStore.openAfterClose(path: path, options: options).close()
        #expect(migrations.withLock { $0 } == [[0, SQLiteSchema.latestVersion]])
    }

    /// A damaged database opened with a WAL beside it: the refusal says the WAL may be another
    /// file's (a backup restored without moving the old WAL away replays it: audit 21 L4).
    @Test func damageFoundWithAWALBesideTheFileMentionsIt() throws {
        let db = try TestDatabase()
        _ = try db.write(Operations.createMealRecord, MealKeyIndexTests.meal("first", at: 1_800_000_000))
        try db.closeAndExecute("INSERT INTO meal_records VALUES ('not-a-uuid', 'x', 1, 1, 5, 0, 0, 0, NULL)")
        let plain = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
        #expect(plain?.code == .dataLoss)
        #expect(plain?.message.contains("WAL") == false, "\(String(describing: plain))")
        try Data([UInt8](repeating: 7, count: 4096)).write(to: URL(fileURLWithPath: db.path + "-wal"))
        let hinted = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
        #expect(hinted?.code == .dataLoss)
        #expect(hinted?.message.contains("a WAL file (\(db.path)-wal) was beside it") == true,
                "\(String(describing: hinted))")
        try db.closeAndExecute("DELETE FROM meal_records WHERE eaten_at_ms = 5")
        try db.reopen(seed: false)
    }

    /// A file in another journal mode, locked by another process at start: the switch to WAL
    /// waits `busyTimeoutMilliseconds` as every other statement does (it failed at once: audit 21 I2).
    @Test func theSwitchToWALWaitsForAnotherProcesssLock() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-wal-switch")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("larder.sqlite").path
        try SQLiteStore.openAfterClose(path: path, options: .init(seed: false)).close()
        let locked = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let thread = SystemThread(name: "lock-holder") {
            // Another process's lock, as far as SQLite can tell: a connection of its own.
            guard let holder = try? SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE) else { return }
            defer { holder.close() }
            try? holder.execute("PRAGMA journal_mode=DELETE")
            try? holder.execute("BEGIN IMMEDIATE")
            locked.signal()
            usleep(300_000)
            released.signal()  // before the COMMIT: the store cannot open before it
            try? holder.execute("COMMIT")
        }
        defer { thread.join() }
        #expect(locked.wait(timeout: .now() + 60) == .success)
        var options = SQLiteStore.Options(seed: false)
        options.busyTimeoutMilliseconds = 60_000
        let store = try SQLiteStore.openAfterClose(path: path, options: options)
        store.close()
        #expect(released.wait(timeout: .now()) == .success, "it opened after the lock was released")
    }
}
