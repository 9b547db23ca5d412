import LarderTestSupport
import Dispatch
import Foundation
import LarderAPI
import LarderPostgres
import LarderStore
import LarderWire
import Testing
import LarderSystem

/// What only the PostgreSQL backend has: several stores (replicas) on one
/// database, schema_migrations, reconnecting, and its error mapping.
@Suite(.enabled(if: PostgresTestDatabase.adminURL != nil, "LARDER_TEST_POSTGRES_URL is not set"), .offThePool)
struct PostgresStoreTests {
    static func open(_ url: String, seed: Bool = true) throws(RPCError) -> PostgresStore {
        try PostgresStore.open(url: url, options: .init(durability: .normal, seed: seed))
    }

    static func run<R: Sendable>(_ store: any Store, deadline: UInt64? = nil,
                                 _ operation: @escaping @Sendable (any StoreWriter) throws(RPCError) -> R)
        -> Result<R, RPCError> {
        let waiter = Waiter<R>()
        store.write(deadline: deadline, operation, completion: waiter.finish)
        return waiter.wait()
    }

    static func list(_ store: any Store) throws -> [Location] {
        let waiter = Waiter<ListLocationsResponse>()
        store.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) },
                   completion: waiter.finish)
        return try waiter.wait().get().locations
    }

    @Test func replicasOpeningTogetherMigrateAndSeedExactlyOnce() throws {
        let database = try PostgresTestDatabase()
        let stores = LockedValue<[Int: Result<PostgresStore, RPCError>]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let result = Result { () throws(RPCError) -> PostgresStore in try Self.open(database.url) }
            stores.withLock { $0[index] = result }
        }
        let opened = try stores.withLock { results in try results.values.map { try $0.get() } }
        defer { for store in opened { store.close() } }
        #expect(opened.count == 4)
        for store in opened {
            #expect(Set(try Self.list(store).map(\.name)) == ["客廳", "廚房", "臥室", "浴室"])
        }
        let connection = try PostgresConnection(url: database.url)
        defer { connection.close() }
        let versions = try connection.query("SELECT version FROM schema_migrations ORDER BY version")
        #expect(versions.rowCount == 2)
        #expect(try (0..<versions.rowCount).map { try versions.int64(row: $0, column: 0) } == [1, 2])
        #expect(try connection.query("SELECT count(*) FROM category_groups").int64(row: 0, column: 0) == 9)
    }

    @Test func twoReplicasRacingForOneNameGetOneOKAndOneAlreadyExists() throws {
        let database = try PostgresTestDatabase()
        let first = try Self.open(database.url, seed: false)
        let second = try Self.open(database.url, seed: false)
        defer { first.close(); second.close() }
        for round in 0..<20 {
            let name = "race \(round)"
            let results = LockedValue<[Result<Location, RPCError>]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let result = Self.run(index == 0 ? first : second) { w throws(RPCError) in
                    try Operations.createLocation(CreateLocationRequest(location: Location(name: name, colorHex: "#000000")), w)
                }
                results.withLock { $0.append(result) }
            }
            let all = results.withLock { $0 }
            #expect(all.filter { (try? $0.get()) != nil }.count == 1, "round \(round): \(all)")
            #expect(all.compactMap { if case .failure(let e) = $0 { e } else { nil } }
                == [RPCError(.alreadyExists, "location name \"\(name)\" already exists")])
        }
        #expect(try Self.list(first).count == 20)
        #expect(try Self.list(second).count == 20)
    }

    /// An update with a field mask changes only its fields, even when another replica updates
    /// other fields of the same row at the same moment: each reads the row locked, so the second
    /// waits for the first and writes back what it wrote (before, ~90 % of rounds lost one change).
    @Test func maskedUpdatesFromTwoReplicasAtOnceKeepBothChanges() throws {
        let database = try PostgresTestDatabase()
        let first = try Self.open(database.url, seed: false)
        let second = try Self.open(database.url, seed: false)
        defer { first.close(); second.close() }
        for round in 0..<30 {
            let created = try Self.run(first) { w throws(RPCError) in
                try Operations.createLocation(CreateLocationRequest(location: Location(name: "room \(round)",
                                                                                       colorHex: "#000000")), w)
            }.get()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let update = index == 0
                    ? UpdateLocationRequest(location: Location(id: created.id, name: "renamed \(round)"),
                                            updateMask: ["name"])
                    : UpdateLocationRequest(location: Location(id: created.id, colorHex: "#FFFFFF"),
                                            updateMask: ["color_hex"])
                let result = Self.run(index == 0 ? first : second) { w throws(RPCError) in
                    try Operations.updateLocation(update, w)
                }
                #expect((try? result.get()) != nil, "round \(round): \(result)")
            }
            let stored = try #require(try Self.list(second).first { $0.id == created.id })
            #expect(stored.name == "renamed \(round)" && stored.colorHex == "#FFFFFF", "round \(round): \(stored)")
        }
    }

    /// A cascade delete while another replica's transaction is adding a category to the group
    /// waits for it and deletes that category too: never FAILED_PRECONDITION for a delete that
    /// asked for cascade (before, the delete missed the uncommitted category and then hit its
    /// foreign key). The other replica's transaction is held open here with a connection of its own.
    @Test func aCascadeDeleteWaitsForACategoryBeingAddedAndDeletesItToo() throws {
        let database = try PostgresTestDatabase()
        let store = try Self.open(database.url, seed: false)
        defer { store.close() }
        let group = try Self.run(store) { w throws(RPCError) in
            let group = try Operations.createCategoryGroup(CreateCategoryGroupRequest(
                categoryGroup: CategoryGroup(name: "pantry", colorHex: "#000000")), w)
            _ = try Operations.createItemCategory(CreateItemCategoryRequest(itemCategory: ItemCategory(
                name: "first", iconName: "box", categoryGroupID: group.id)), w)
            return group
        }.get()
        let adding = try PostgresConnection(url: database.url)
        let watching = try PostgresConnection(url: database.url)
        defer { adding.close(); watching.close() }
        _ = try adding.execute("BEGIN")
        _ = try adding.execute("INSERT INTO item_categories (id, name, icon_name, category_group_id, create_time_ms, "
            + "update_time_ms) VALUES ('00000000-0000-4000-8000-0000000000aa', 'second', 'box', '\(group.id)', 0, 0)")
        let deleted = LockedValue<Result<Empty, RPCError>?>(nil)
        let thread = Thread {
            let result = Self.run(store) { w throws(RPCError) in
                try Operations.deleteCategoryGroup(DeleteCategoryGroupRequest(id: group.id, cascade: true), w)
            }
            deleted.withLock { $0 = result }
        }
        thread.start()
        // The delete waits on a lock the open insert holds (bounded: 600 s on the slowest machine); other
        // tests' databases share the cluster, so only this database's sessions count.
        var waiting = false
        for _ in 0..<60_000 where !waiting {
            waiting = try watching.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                         + "AND wait_event_type = 'Lock'").int64(row: 0, column: 0) > 0
            if !waiting { usleep(10_000) }
        }
        #expect(waiting)
        _ = try adding.execute("COMMIT")
        var result: Result<Empty, RPCError>?
        for _ in 0..<60_000 where result == nil {
            result = deleted.withLock { $0 }
            if result == nil { usleep(10_000) }
        }
        let outcome = try #require(result)
        #expect((try? outcome.get()) != nil, "\(outcome)")
        #expect(try watching.query("SELECT count(*) FROM item_categories").int64(row: 0, column: 0) == 0)
        #expect(try watching.query("SELECT count(*) FROM category_groups").int64(row: 0, column: 0) == 0)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let database = try PostgresTestDatabase()
        try Self.open(database.url).close()
        let connection = try PostgresConnection(url: database.url)
        defer { connection.close() }
        try connection.query("INSERT INTO schema_migrations (version, applied_at_ms) VALUES ($1, 0)", [.int64(99)])
        let error = rpcError { try Self.open(database.url) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains("schema version 99 is newer than this build supports") == true)
    }

    /// A database of another application's that uses one of our names (a table, an index, a
    /// constraint's index) is refused before any DDL runs, naming what is in the way.
    @Test(arguments: [("CREATE TABLE locations (x int)", "locations"),
                      ("CREATE TABLE other (x int); CREATE INDEX meal_records_category_eaten_at ON other (x)",
                       "meal_records_category_eaten_at"),
                      ("CREATE TABLE other (x int, CONSTRAINT category_groups_name UNIQUE (x))", "category_groups_name")])
    func aDatabaseHoldingForeignTablesOfOurNamesIsRefused(ddl: String, name: String) throws {
        let database = try PostgresTestDatabase()
        let connection = try PostgresConnection(url: database.url)
        defer { connection.close() }
        try connection.execute(ddl)
        let error = rpcError { try Self.open(database.url) }
        #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
        #expect(error?.message.contains("schema \"public\" already holds \(name), which larder did not create") == true,
                "\(String(describing: error))")
        #expect(error?.message.contains("CREATE TABLE") == false, "no DDL in the message")
        // Nothing was created: the database is as its owner left it.
        #expect(try connection.query("SELECT count(*) FROM pg_class WHERE relname IN ('category_groups', 'schema_migrations')")
            .int64(row: 0, column: 0) == 0)
    }

    /// Audit 37 L2: another tool's schema_migrations table is not taken for larder's.
    @Test(arguments: ["CREATE TABLE schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL); "
                        + "INSERT INTO schema_migrations VALUES (1, false)",
                      "CREATE TABLE schema_migrations (version character varying NOT NULL PRIMARY KEY); "
                        + "INSERT INTO schema_migrations VALUES ('20240101000000')"])
    func anotherToolsMigrationsTableIsRefused(ddl: String) throws {
        let database = try PostgresTestDatabase()
        let connection = try PostgresConnection(url: database.url)
        defer { connection.close() }
        try connection.execute(ddl)
        let error = rpcError { try Self.open(database.url) }
        #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
        #expect(error?.message.contains("schema \"public\" holds a schema_migrations table that is not larder's (columns: version")
                == true, "\(String(describing: error))")
        #expect(try connection.query("SELECT count(*) FROM pg_class WHERE relname = 'category_groups'")
            .int64(row: 0, column: 0) == 0, "nothing was created")
    }

    @Test func aLostConnectionIsReplacedBeforeTheNextCall() throws {
        let database = try PostgresTestDatabase()
        let store = try Self.open(database.url)
        defer { store.close() }
        #expect(try Self.list(store).count == 4)
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        let killed = try admin.query("""
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = $1 AND application_name = 'larder-server'
            """, [.text(database.name)])
        #expect(try killed.int64(row: 0, column: 0) == 3, "one writer and two readers")
        // The dead connections are noticed and replaced: the first call succeeds.
        let first = Self.run(store) { w throws(RPCError) in
            try Operations.createLocation(CreateLocationRequest(location: Location(name: "A", colorHex: "#000000")), w)
        }
        #expect(try first.get().name == "A")
        let retried = Self.run(store) { w throws(RPCError) in
            try Operations.createLocation(CreateLocationRequest(location: Location(name: "B", colorHex: "#000000")), w)
        }
        #expect(try retried.get().name == "B")
        var names: [String] = []
        for _ in 0..<4 { names = try Self.list(store).map(\.name) }
        #expect(names.contains("B") && names.count == 6)
    }

    /// A login the server refuses is not "unreachable, try again": a database that does not
    /// exist reads as a refused login (PERMISSION_DENIED), with PostgreSQL's reason.
    @Test func aMissingDatabaseIsARefusedLoginNotAnOutage() throws {
        let database = try PostgresTestDatabase()
        let missing = database.url.replacing(/\/[^\/?]+(\?|$)/, with: { "/larder_no_such_db" + $0.output.1 })
        let error = rpcError { try Self.open(missing) }
        #expect(error?.code == .permissionDenied, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("the PostgreSQL server refused the login: ") == true)
        #expect(error?.message.contains("database \"larder_no_such_db\" does not exist") == true)
    }

    /// A database at the latest version that lacks a table or index of it (dropped by hand) is
    /// refused at start, naming what is missing (audit 16 L4: it reported SERVING and failed
    /// every meal call INTERNAL).
    @Test func aMigratedDatabaseMissingATableIsRefusedByName() throws {
        let database = try PostgresTestDatabase()
        try Self.open(database.url).close()
        let admin = try PostgresConnection(url: database.url)
        defer { admin.close() }
        _ = try admin.execute("DROP INDEX meal_records_category_eaten_at")
        let error = rpcError { try Self.open(database.url) }
        #expect(error?.code == .failedPrecondition, "\(String(describing: error))")
        #expect(error?.message.contains("lacks meal_records_category_eaten_at") == true, "\(String(describing: error))")
        _ = try admin.execute("DROP TABLE meal_records")
        let table = rpcError { try Self.open(database.url) }
        #expect(table?.message.contains("meal_records, meal_records_category_eaten_at, meal_records_eaten_at_covering") == true,
                "\(String(describing: table))")
    }

    /// `open` says when it created or migrated the schema (logged `database_created` /
    /// `database_migrated`, as for SQLite), and says nothing when it was current.
    @Test func openSaysWhenItCreatedTheSchema() throws {
        let database = try PostgresTestDatabase()
        let migrations = LockedValue<[[Int]]>([])
        var options = PostgresStore.Options()
        options.onMigrated = { from, to, _ in migrations.withLock { $0.append([from, to]) } }
        try PostgresStore.open(url: database.url, options: options).close()
        try PostgresStore.open(url: database.url, options: options).close()
        #expect(migrations.withLock { $0 }.map { $0[0] } == [0], "created from nothing, once: \(migrations.withLock { $0 })")
    }

    /// Startup waits for the schema migration lock a bounded time, then says who may hold it
    /// (it waited for ever, not listening and logging nothing, and ignored SIGTERM meanwhile).
    @Test func aHeldMigrationLockEndsStartupAfterItsTimeout() throws {
        let database = try PostgresTestDatabase()
        try Self.open(database.url).close()
        let holder = try PostgresConnection(url: database.url)
        defer { holder.close() }
        _ = try holder.execute("BEGIN")
        _ = try holder.query("SELECT pg_advisory_xact_lock($1)", [.int64(0x4C41_5244_4552_0001)])  // PostgresSchema.migrationLockKey
        let busy = LockedValue(0)
        let error = rpcError {
            var options = PostgresStore.Options(migrationLockTimeoutSeconds: 1)
            options.onMigrationLockBusy = { busy.withLock { $0 += 1 } }  // logged: the wait is no longer silent
            return try PostgresStore.open(url: database.url, options: options)
        }
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect(error?.message.contains("waited 1 s for the schema migration lock") == true)
        #expect(busy.withLock { $0 } == 1)
        _ = try holder.execute("COMMIT")
        try PostgresStore.open(url: database.url, options: .init(migrationLockTimeoutSeconds: 1)).close()

        // A table lock on schema_migrations: the read of the version waits for it, and says so too
        // (audit 16 D1: it waited, then gave the bare "lock timeout").
        _ = try holder.execute("BEGIN")
        _ = try holder.execute("LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE")
        let tableError = rpcError {
            try PostgresStore.open(url: database.url, options: .init(migrationLockTimeoutSeconds: 1))
        }
        #expect(tableError?.message.contains("waited 1 s for the schema migration lock") == true,
                "\(String(describing: tableError))")
        _ = try holder.execute("ROLLBACK")
    }

    /// Sessions the server ends while idle (an administrator, `idle_session_timeout`) are
    /// replaced without health ever turning NOT_SERVING: the database itself never went away.
    @Test func idleSessionsEndedByTheServerDoNotCountAsTheDatabaseLost() throws {
        let database = try PostgresTestDatabase()
        let changes = LockedValue<[PostgresStore.AvailabilityChange]>([])
        let store = try PostgresStore.open(url: database.url, options: .init(
            monitorInterval: .milliseconds(50), onAvailabilityChange: { change in changes.withLock { $0.append(change) } }))
        defer { store.close() }
        let admin = try PostgresConnection(url: database.url)
        defer { admin.close() }
        /// The monitor's backend, once it has one that is not `old` and has answered a probe on it
        /// (ending a session the monitor has only just opened would end its retry too).
        func monitorPID(other old: Int64?) throws -> Int64? {
            for _ in 0..<60_000 {
                let rows = try admin.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                           + "AND application_name = 'larder-server-monitor' AND state = 'idle' "
                                           + "AND query LIKE 'SELECT current_setting(''transaction_read_only'')%'")
                if rows.rowCount == 1, case let pid = try rows.int64(row: 0, column: 0), pid != old { return pid }
                usleep(10_000)
            }
            return nil
        }
        // Each round ends the monitor's idle session, then waits for it to have a new one.
        var pid = try monitorPID(other: nil)
        for _ in 0..<10 {
            let ended = try #require(pid)
            _ = try admin.query("SELECT pg_terminate_backend($1::int)", [.int64(ended)])
            pid = try monitorPID(other: ended)
        }
        // The idle data sessions too, all at once; once they are gone, the next calls replace them.
        // (A session ended between a transaction's first statement and the next is a lost
        // connection mid-transaction, which does count: hence the wait.)
        _ = try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                            + "AND pid <> pg_backend_pid() AND application_name = 'larder-server' AND state = 'idle'")
        for _ in 0..<60_000 {
            let left = try admin.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'larder-server' "
                                       + "AND datname = current_database()").int64(row: 0, column: 0)
            if left == 0 { break }
            usleep(10_000)
        }
        #expect(try Self.list(store).count == 4, "calls are served on new sessions")
        #expect(changes.withLock { $0 } == [], "\(changes.withLock { $0 })")
    }

    @Test func anUnreachableServerIsUnavailableWithoutThePassword() throws {
        let error = rpcError {
            try PostgresStore.open(url: "postgres://larder:hunter2@127.0.0.1:1/larder",
                                   options: .init(connectTimeoutSeconds: 2))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("postgres://larder:***@127.0.0.1:1/larder") == true)
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test(arguments: [
        ("postgres://u:secret@h:5432/db", "postgres://u:***@h:5432/db"),
        ("postgresql://u@h/db?password=secret&sslmode=disable", "postgresql://u@h/db?password=***&sslmode=disable"),
        ("postgres://h/db", "postgres://h/db"),
    ])
    func urlsAreRedacted(url: String, expected: String) {
        #expect(PostgresURL.redacted(url) == expected)
        #expect(PostgresURL.isPostgres(url))
        #expect(!PostgresURL.isPostgres("./postgres.sqlite"))
    }
}
