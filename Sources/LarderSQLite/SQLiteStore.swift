#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import LarderAPI
public import LarderStore
public import LarderWire
import LarderSystem

/// The SQLite `Store`: one file in WAL mode, one writer connection doing group
/// commit and a pool of reader connections, each on a thread of its own, plus
/// one for the point reads the event loop runs itself (`Options.inlinePointReads`).
public final class SQLiteStore: Store {
    private let executor: StoreExecutor
    private let checkpointer: LockedValue<SQLiteCheckpointer?>
    private let fileLock: DatabaseFileLock
    /// Notices the file moving away under the store; nil for a read-only store.
    private let fileWatch: DatabaseFileWatch?
    /// How its connections wait for another process's locks; abandoned by `close`.
    private let busyWait: SQLiteBusyWait
    /// The database file.
    public let path: String

    private init(path: String, executor: StoreExecutor, checkpointer: SQLiteCheckpointer?,
                 fileLock: DatabaseFileLock, fileWatch: DatabaseFileWatch?, busyWait: SQLiteBusyWait) {
        self.path = path
        self.fileWatch = fileWatch
        self.busyWait = busyWait
        self.executor = executor
        self.checkpointer = LockedValue(checkpointer)
        self.fileLock = fileLock
    }

    /// Opens (creating when missing, unless read-only) the database at `path`,
    /// migrates its schema, seeds a new database when `options.seed`, and reads
    /// where every meal record is (`MealKeyIndex`). Holds a lock on the file until
    /// `close()`: one read-write store per file, in any process.
    ///
    /// - Throws: INVALID_ARGUMENT when the directory does not exist or the path is
    ///   one, UNAVAILABLE when the file cannot be opened, FAILED_PRECONDITION when
    ///   it is not a SQLite file, another application's, its schema is newer than
    ///   this build or another store has it open for writing, DATA_LOSS when it is damaged.
    public static func open(path given: String, options: Options = Options()) throws(RPCError) -> SQLiteStore {
        try checkDirectory(of: given)
        let path = resolvedPath(given)
        // Unknown (or a file system that reports no sizes): SQLite's own errors will tell.
        if !options.readOnly, let free = FreeSpace.bytes(at: directory(of: path)) {
            try checkFreeSpace(free, for: path, minimum: options.minimumFreeBytes)
            if free < options.lowFreeSpaceBytes { options.onLowFreeSpace(free) }
        }
        if let info = try checkIsADatabaseFile(path, given: given), info.st_nlink > 1 {
            options.onHardLinks(Int(info.st_nlink))
        }
        let walWasThere = fileSize(path + "-wal") > 0
        let fileLock = try DatabaseFileLock(path: path, shared: options.readOnly)
        do throws(RPCError) {
            if !options.readOnly { try fileLock.lockWAL() }  // a WAL another server uses
            return try open(path: path, options: options, fileLock: fileLock)
        } catch {
            fileLock.removeCreatedFiles()
            fileLock.release()
            guard error.code == .dataLoss, walWasThere else { throw error }
            throw RPCError(.dataLoss, error.message + "; a WAL file (\(path)-wal) was beside it, and SQLite copies "
                           + "it into the database when it opens: if the database file was restored from a backup "
                           + "without moving its old -wal and -shm away, that WAL came from another file (put the "
                           + "backup back, move them away, then start)")
        }
    }

    /// The file SQLite really uses: symbolic links resolved. SQLite follows a link and keeps
    /// its WAL beside the target, so the WAL's lock and the file watch must name the target
    /// too, or a second server could start on the same WAL. A path with nothing behind it
    /// yet: its directory resolved (a link to a missing file: its target's).
    static func resolvedPath(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {  // as many links as the kernel follows
            if let real = realpath(current, nil) {
                defer { free(real) }
                return String(cString: real)
            }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX))
            let count = readlink(current, &target, target.count)
            guard count > 0 else { break }
            let link = String(decoding: target[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = link.hasPrefix("/") ? link : directory(of: current) + "/" + link
        }
        guard let slash = current.lastIndex(of: "/"), let real = realpath(directory(of: current), nil) else {
            return current
        }
        defer { free(real) }
        let directory = String(cString: real)
        return (directory == "/" ? "" : directory) + current[slash...]
    }

    /// The size of the file at `path`, 0 when there is none.
    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    private static func open(path: String, options: Options, fileLock: DatabaseFileLock)
        throws(RPCError) -> SQLiteStore
    {
        let mealKeys = MealKeyIndex()
        let busyWait = SQLiteBusyWait(timeoutMilliseconds: options.busyTimeoutMilliseconds)
        let fileWatch = options.readOnly ? nil : DatabaseFileWatch(
            path: path, walHasMoved: { [fileLock] in fileLock.walHasMoved() }, onMoved: options.onFileMoved,
            onLostWALCopied: options.onLostWALCopied)
        do throws(SQLiteError) {
            let flags = options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            let writerConnection = try SQLiteConnection(path: path, flags: flags)
            try configure(writerConnection, options: options, busyWait: busyWait,
                          cacheKilobytes: options.writerCacheKilobytes)
            if options.readOnly {
                try checkedVersion(of: writerConnection)
            } else {
                try refuseForeignTables(writerConnection)  // before WAL mode changes the file
                let mode = try switchToWAL(writerConnection, busyWait: busyWait)
                guard mode.lowercased() == "wal" else {
                    throw SQLiteError(code: SQLITE_ERROR, message: "cannot switch \(path) to WAL mode (got \(mode))")
                }
            }
            let closing = options.readOnly ? nil : ClosingCheckpoint(
                walPath: fileLock.walPath, milliseconds: options.closeCheckpointMilliseconds,
                report: options.onCloseCheckpointIncomplete)
            let writer = SQLiteSession(connection: writerConnection, role: .writer, mealKeys: mealKeys,
                                       closingCheckpoint: closing, fileWatch: fileWatch)
            var checkpointer: SQLiteCheckpointer?
            if !options.readOnly {
                try migrate(writer, seed: options.seed, onMigrated: options.onMigrated)
                let background = try SQLiteCheckpointer(path: path, pages: options.checkpointPages,
                                                        idleMilliseconds: options.idleCheckpointMilliseconds,
                                                        busyWait: busyWait, fileWatch: fileWatch)
                checkpointer = background
                do throws(SQLiteError) { try background.install(on: writerConnection) } catch {
                    background.stop()
                    throw error
                }
            }
            do throws(SQLiteError) { try writer.loadMealKeys() } catch {
                checkpointer?.stop()
                throw error
            }

            var readers: [any StoreConnection] = []
            var batchReader: (any StoreConnection)?
            do throws(SQLiteError) {
                func reader() throws(SQLiteError) -> SQLiteSession {
                    let connection = try SQLiteConnection(
                        path: path, flags: options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
                    try configure(connection, options: options, busyWait: busyWait, cacheKilobytes: options.cacheKilobytes)
                    try connection.execute("PRAGMA query_only=ON")
                    return SQLiteSession(connection: connection, role: .reader, mealKeys: mealKeys)
                }
                for _ in 0..<max(1, options.readerCount) { readers.append(try reader()) }
                if options.inlinePointReads { batchReader = try reader() }
            } catch {
                for reader in readers { reader.close() }
                writer.close()
                checkpointer?.stop()
                throw error
            }
            let executor = StoreExecutor(writer: writer, readers: readers, batchReader: batchReader,
                                         options: StoreExecutor.Options(maxWriteBatch: options.maxWriteBatch))
            return SQLiteStore(path: path, executor: executor, checkpointer: checkpointer, fileLock: fileLock,
                               fileWatch: fileWatch, busyWait: busyWait)
        } catch {
            throw openError(error, path: path)
        }
    }

    public func submitBatch(_ body: () -> Void) { executor.submitBatch(body) }
    public var holdsReadSnapshot: Bool { executor.holdsReadSnapshot }
    public func releaseReadSnapshot() { executor.releaseReadSnapshot() }

    public func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) {
        executor.setCompletionsDelivered(body)
    }

    public func submit(_ read: StoreRead, cost: ReadCost) { executor.submit(read, cost: cost) }

    public func submit(_ write: StoreWrite) { executor.submit(write) }

    /// False once the database file was moved, replaced or deleted under the store: it
    /// takes no more writes (health NOT_SERVING).
    public var isAvailable: Bool { fileWatch?.hasMoved != true }

    /// Fails queued work (UNAVAILABLE, not run), lets running work finish, checkpoints the WAL
    /// into the database file, and closes. Work that
    /// waits for a lock another process holds gives up at once (UNAVAILABLE) instead of waiting
    /// out `busyTimeoutMilliseconds`.
    public func close() {
        busyWait.abandon()
        executor.close()
        // After the writer closed: its WAL hook no longer fires.
        let background = checkpointer.withLock { value in
            defer { value = nil }
            return value
        }
        background?.stop()
        fileLock.release()
    }

    // MARK: Opening

    private static func checkDirectory(of path: String) throws(RPCError) {
        guard !path.isEmpty else { throw RPCError.invalidArgument("the database path is empty") }
        let directory = directory(of: path)
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RPCError.invalidArgument(
                "cannot open database \"\(path)\": directory \"\(directory)\" does not exist")
        }
    }

    /// The first 16 bytes of every SQLite database file.
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// Refuses a path that names a directory or another kind of file, before anything is
    /// created beside it: a mistyped path (`/etc/passwd`) is not a damaged database to restore
    /// from a backup. Missing, empty (SQLite makes it a database) or unreadable (SQLite says
    /// why) files pass. Returns the file's status, nil when there is no file.
    private static func checkIsADatabaseFile(_ path: String, given: String) throws(RPCError) -> stat? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw RPCError.invalidArgument("database \"\(given)\": it is a directory; name a file in it")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw RPCError.invalidArgument("database \"\(given)\": it is not a regular file; name a file")
        }
        guard info.st_size > 0 else { return info }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return info }
        defer { Glibc.close(fd) }
        var header = [UInt8](repeating: 0, count: sqliteHeader.count)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0, Array(header[0..<count]) != sqliteHeader else { return info }
        throw RPCError(.failedPrecondition, "database \"\(given)\": it is not a SQLite database (it does not start "
                       + "with SQLite's header), so it was left as it was; check the path")
    }

    /// The directory holding the file at `path` ("." for a bare name).
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func checkFreeSpace(_ free: UInt64, for path: String, minimum: UInt64) throws(RPCError) {
        guard free >= minimum else {
            throw RPCError(.resourceExhausted, "cannot open database \"\(path)\": the file system holding it has "
                           + "\(free) bytes free, and larder-server needs at least \(minimum) to start (for the WAL "
                           + "and its index); free some space, but not by deleting \(path)-wal: it may hold "
                           + "acknowledged writes the database file does not have yet")
        }
    }

    private static func configure(_ connection: SQLiteConnection, options: Options, busyWait: SQLiteBusyWait,
                                  cacheKilobytes: Int)
        throws(SQLiteError)
    {
        try connection.waitWhenBusy(busyWait)
        try connection.execute("PRAGMA foreign_keys=ON")
        try connection.execute(options.durability == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        // A larger page cache than the 2 MB default, and reads through mmap instead of pread copies.
        try connection.execute("PRAGMA cache_size=-\(max(1024, cacheKilobytes))")
        try connection.execute("PRAGMA mmap_size=\(max(0, options.mmapBytes))")
        // When the WAL restarts after a complete checkpoint, cut the file back to what the
        // writer's own checkpoint threshold allows instead of keeping its largest size on disk.
        let walLimit = Int64(max(1, options.checkpointPages)) * Int64(CheckpointPolicy.fallbackFactor) * 4096
        try connection.execute("PRAGMA journal_size_limit=\(walLimit)")
    }

    /// `PRAGMA journal_mode=WAL`, tried again while another process holds a lock, as the
    /// store's busy handler waits (`SQLiteBusyState`: `--busy-timeout`): SQLite calls no busy
    /// handler for the switch of a file that is not yet in WAL mode, so it failed at once where
    /// a WAL file waits.
    private static func switchToWAL(_ connection: SQLiteConnection, busyWait: SQLiteBusyWait)
        throws(SQLiteError) -> String
    {
        let waiting = SQLiteBusyState(policy: busyWait)
        var attempt: Int32 = 0
        while true {
            do throws(SQLiteError) {
                return try pragmaText(connection, "PRAGMA journal_mode=WAL")
            } catch where (error.code & 0xFF == SQLITE_BUSY || error.code & 0xFF == SQLITE_LOCKED)
                && waiting.retry(attempt: attempt) {
                attempt += 1
            }
        }
    }

    private static func pragmaText(_ connection: SQLiteConnection, _ sql: String) throws(SQLiteError) -> String {
        let statement = try connection.prepare(sql)
        return try statement.step() ? statement.string(at: 0) : ""
    }

    private static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.prepare("PRAGMA user_version")
        return try statement.step() ? Int(statement.int64(at: 0)) : 0
    }

    /// The file's schema version, once it is one this build can serve or upgrade: not negative,
    /// not newer, and (at the latest) with every table and index the migrations make.
    @discardableResult
    private static func checkedVersion(of connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let version = try userVersion(connection)
        guard version >= 0 else { throw impossibleVersion(version) }
        guard version <= SQLiteSchema.latestVersion else { throw newerSchema(version) }
        if version == SQLiteSchema.latestVersion { try checkRelations(of: connection, version: version) }
        return version
    }

    /// A negative user_version: no build of larder wrote it (a damaged header, or a hand edit).
    private static func impossibleVersion(_ version: Int) -> SQLiteError {
        SQLiteError(code: SQLITE_SCHEMA, message: "schema version \(version) (the file's user_version) is not one larder "
                    + "writes: the file header is damaged or was edited; restore the database from a backup")
    }

    /// The tables and indexes a database of the latest version holds, by name: the migrations run
    /// once on an empty in-memory database.
    private static let latestRelations: Result<Set<String>, SQLiteError> = {
        do throws(SQLiteError) {
            let scratch = try SQLiteConnection(path: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            for migration in SQLiteSchema.migrations { try scratch.execute(migration) }
            return .success(try relations(of: scratch))
        } catch {
            return .failure(error)
        }
    }()

    private static func relations(of connection: SQLiteConnection) throws(SQLiteError) -> Set<String> {
        let statement = try connection.prepare(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'")
        var names = Set<String>()
        while try statement.step() { names.insert(statement.string(at: 0)) }
        return names
    }

    /// Refuses a database stamped with the latest version that lacks one of its tables or indexes
    /// (dropped by hand, or a user_version changed): otherwise it would start, report SERVING, and
    /// fail every call on that table.
    private static func checkRelations(of connection: SQLiteConnection, version: Int) throws(SQLiteError) {
        let missing = try latestRelations.get().subtracting(try relations(of: connection))
        guard !missing.isEmpty else { return }
        throw SQLiteError(code: SQLITE_SCHEMA, message: "its user_version says schema version \(version), but it lacks "
                          + "\(missing.sorted().joined(separator: ", ")): the file was altered outside larder; restore "
                          + "it from a backup")
    }

    /// Every table and index the migrations create.
    static let relationNames = Set(SchemaRelationNames.created(by: SQLiteSchema.migrations))

    /// A file larder never migrated (user_version 0) that already holds tables, indexes or views
    /// is another application's (larder stamps the version in the transaction that creates its
    /// tables): refused, naming them, before anything changes it (WAL mode, larder's tables).
    private static func refuseForeignTables(_ connection: SQLiteConnection) throws(SQLiteError) {
        guard try userVersion(connection) == 0 else { return }
        let statement = try connection.prepare(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
        var taken: [String] = []
        var others: [String] = []
        while try statement.step() {
            let name = statement.string(at: 0)
            if relationNames.contains(name) { taken.append(name) } else { others.append(name) }
        }
        if !taken.isEmpty {
            throw SQLiteError(code: SQLITE_SCHEMA, message: "it already holds \(taken.joined(separator: ", ")), which "
                              + "larder did not create (its user_version is 0): give larder a file of its own")
        }
        guard !others.isEmpty else { return }
        let shown = others.prefix(5).joined(separator: ", ") + (others.count > 5 ? ", …" : "")
        throw SQLiteError(code: SQLITE_SCHEMA, message: "it is another application's database (it holds \(shown), and "
                          + "larder never opened it: its user_version is 0); give larder a file of its own")
    }

    private static func newerSchema(_ version: Int) -> SQLiteError {
        SQLiteError(code: SQLITE_SCHEMA, message: "schema version \(version) is newer than this build supports "
                    + "(\(SQLiteSchema.latestVersion)); upgrade larder")
    }

    /// Applies the missing migrations in one transaction; a new database is
    /// seeded in that same transaction, so it is seeded exactly once.
    private static func migrate(_ writer: SQLiteSession, seed: Bool,
                                onMigrated: (_ from: Int, _ to: Int, _ milliseconds: Int) -> Void) throws(SQLiteError) {
        let connection = writer.connection
        let started = MonotonicClock.nanoseconds()
        try connection.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            let version = try checkedVersion(of: connection)
            if version == SQLiteSchema.latestVersion {
                try connection.execute("COMMIT")
                return
            }
            for migration in SQLiteSchema.migrations[version...] {
                do throws(SQLiteError) { try connection.execute(migration) } catch {
                    // A full disk, an I/O error and the like say what they are.
                    guard error.code & 0xFF == SQLITE_ERROR else { throw error }
                    // The tables do not match the version stamp: say so, with SQLite's words.
                    throw SQLiteError(code: SQLITE_SCHEMA, message: "upgrading it from schema version \(version) to "
                                      + "\(SQLiteSchema.latestVersion) failed (\(error.message)); its tables do not match "
                                      + "its user_version, so the file was altered outside larder: restore it from a backup")
                }
            }
            if version > 0 && version < SQLiteSchema.mealEncodingVersion {
                do throws(RPCError) {
                    try writer.fillMissingMealEncodings()
                } catch {
                    throw SQLiteError(code: SQLITE_ERROR, message: "storing meal record encodings failed: \(error)")
                }
            }
            if version == 0 && seed {
                do throws(RPCError) {
                    try SeedData.insert(into: writer)
                } catch {
                    throw SQLiteError(code: SQLITE_ERROR, message: "seeding failed: \(error)")
                }
            }
            // A constant of this build, not a value from outside.
            try connection.execute("PRAGMA user_version=\(SQLiteSchema.latestVersion)")
            try connection.execute("COMMIT")
            onMigrated(version, SQLiteSchema.latestVersion, Int((MonotonicClock.nanoseconds() - started) / 1_000_000))
        } catch {
            do throws(SQLiteError) { try connection.execute("ROLLBACK") } catch {}
            throw error
        }
    }

    private static func openError(_ error: SQLiteError, path: String) -> RPCError {
        if error.code == SQLITE_SCHEMA { return RPCError.failedPrecondition("database \"\(path)\": \(error.message)") }
        var rpc = error.rpcError
        // For the operator starting the server, not a client: SQLite's own words.
        if rpc.code == .internal { rpc.message = error.description }
        if !rpc.message.contains(path) { rpc.message = "database \"\(path)\": " + rpc.message }
        // "Read-only": say which of the files this user cannot write (often the -shm another user made).
        if error.code & 0xFF == SQLITE_READONLY {
            let files = [path, path + "-wal", path + "-shm", directory(of: path)]
            let denied = files.filter { access($0, W_OK) != 0 && errno != ENOENT }
            if !denied.isEmpty {
                rpc.message += " (this user cannot write \(denied.joined(separator: ", ")): the server's user must be able to "
                    + "write the database, its -wal and -shm, and their directory; check their owner and mode)"
            }
        }
        return rpc
    }
}