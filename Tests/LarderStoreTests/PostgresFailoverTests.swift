import LarderTestSupport
import Dispatch
import Foundation
import LarderAPI
import LarderPostgres
import LarderStore
import LarderWire
import Testing
import LarderSystem

/// What the PostgreSQL store does when its server goes away under it: the
/// behaviours a failover relies on, tested on the throwaway test cluster
/// (terminated backends, a read-only database, frozen backends).
@Suite(.enabled(if: PostgresTestDatabase.adminURL != nil, "LARDER_TEST_POSTGRES_URL is not set"), .offThePool)
struct PostgresFailoverTests {
    static func create(_ store: any Store, _ name: String, deadline: UInt64? = nil) -> Result<Location, RPCError> {
        PostgresStoreTests.run(store, deadline: deadline) { w throws(RPCError) in
            try Operations.createLocation(
                CreateLocationRequest(location: Location(name: name, colorHex: "#000000")), w)
        }
    }

    /// Polls `condition` every 50 ms for up to `seconds`.
    static func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    /// Terminates the store's backends still in `pg_sleep` (a test trigger's), which hold their locks.
    static func endSleepingStatements(_ admin: PostgresConnection, _ database: PostgresTestDatabase) throws {
        try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = $1 AND application_name LIKE 'larder-server%' AND wait_event = 'PgSleep'
            """, [.text(database.name)])
    }

    /// A session of its own that holds location `id` locked (SELECT … FOR UPDATE in an open
    /// transaction) until it rolls back or closes.
    static func lockingLocation(_ id: String, in database: PostgresTestDatabase) throws -> PostgresConnection {
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        _ = try admin.execute("BEGIN")
        try admin.query("SELECT id FROM locations WHERE id = $1 FOR UPDATE", [.text(id)])
        return admin
    }

    /// Backend pids of the store's connections (writer, readers, monitor) on `database`.
    static func backends(_ admin: PostgresConnection, _ database: PostgresTestDatabase) throws -> [Int32] {
        let rows = try admin.query("""
            SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'larder-server%'
            """, [.text(database.name)])
        return try (0..<rows.rowCount).map { Int32(try rows.int64(row: $0, column: 0)) }
    }

    @Test func connectionsTheServerDroppedAreReplacedBeforeTheFirstCall() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresStoreTests.open(database.url)
        defer { store.close() }
        #expect(try PostgresStoreTests.list(store).count == 4)
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = $1 AND application_name = 'larder-server'
            """, [.text(database.name)])
        #expect(try Self.eventually {
            try admin.query("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'larder-server'
                """, [.text(database.name)]).int64(row: 0, column: 0) == 0
        })
        // As after a restart or a failover: the very first calls succeed, on new connections.
        #expect(try Self.create(store, "after restart").get().name == "after restart")
        for _ in 0..<6 { #expect(try PostgresStoreTests.list(store).count == 5) }
    }

    @Test func aReadOnlySessionIsDroppedAndTheNextCallFindsAWritableOne() throws {
        let database = try PostgresTestDatabase()
        let changes = LockedValue<[PostgresStore.AvailabilityChange]>([])
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal) { change in
            changes.withLock { $0.append(change) }
        })
        defer { store.close() }
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        // What a demoted primary looks like to a new session: read-only.
        try admin.execute("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                        [.text(database.name)])
        let refused = Self.create(store, "on a standby")
        guard case .failure(let error) = refused else {
            Issue.record("a write on a read-only session succeeded")
            return
        }
        #expect(error.code == .unavailable, "retryable, not FAILED_PRECONDITION: \(error)")
        #expect(Self.eventually { !store.isAvailable })
        // The "failover" is over: the next connection is writable again, without a restart.
        try admin.execute("ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        var created: Location?
        #expect(Self.eventually {
            created = try? Self.create(store, "on the primary").get()
            return created != nil
        })
        #expect(created?.name == "on the primary")
        #expect(Self.eventually { store.isAvailable })
        let seen = changes.withLock { $0 }
        #expect(seen.count == 2, "\(seen)")
        // Lost first to the terminated sessions or to the read-only one, whichever the monitor
        // meets first (a race on a busy machine); either way it stays lost until the reset.
        // libpq words a terminated session two ways: with the server's FATAL message when it
        // read it before the socket closed, "server closed the connection unexpectedly" when not.
        if case .lost(let reason) = seen.first {
            #expect(["read-only", "terminating connection", "server closed the connection"].contains { reason.contains($0) },
                    "\(reason)")
        }
        if seen.count == 2, case .regained(let seconds) = seen[1] { #expect(seconds > 0) }
    }

    /// A store on a fresh database where `triggerSQL` (a test trigger) was run, and an admin connection to it.
    static func storeWithTrigger(_ triggerSQL: String) throws
        -> (database: PostgresTestDatabase, store: PostgresStore, admin: PostgresConnection) {
        let database = try PostgresTestDatabase()
        let store = try PostgresStoreTests.open(database.url)  // makes the schema the trigger is on
        let admin: PostgresConnection
        do { admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin") } catch {
            store.close()
            throw error
        }
        do { _ = try admin.execute(triggerSQL) } catch {
            admin.close()
            store.close()
            throw error
        }
        return (database, store, admin)
    }

    @Test func aCommitTheDeadlineCutsOffAnswersDeadlineExceeded() throws {
        // A deferred constraint trigger runs at COMMIT: the INSERT answers at once, its COMMIT waits a minute.
        let (database, store, admin) = try Self.storeWithTrigger("""
            CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(60); RETURN NULL; END $$;
            CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON locations
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
            """)
        defer { store.close(); admin.close() }
        // 10 s: time for the connection, BEGIN and INSERT to come first on a busy machine.
        let deadline = PostgresConnection.monotonicNanoseconds() + 10_000_000_000
        guard case .failure(let error) = Self.create(store, "cut off", deadline: deadline) else {
            Issue.record("a write whose COMMIT outlived its deadline succeeded")
            return
        }
        // gRPC's code for an outcome the deadline cut off, not UNKNOWN (kept for a lost connection).
        #expect(error.code == .deadlineExceeded, "\(error)")
        #expect(error.message.contains("during COMMIT") && error.message.contains("may or may not have been applied"),
                "\(error)")

        // The sleeping COMMIT still holds its lock: end it, then the store serves writes again.
        try Self.endSleepingStatements(admin, database)
        _ = try admin.execute("DROP TRIGGER slow_commit ON locations")
        #expect(Self.eventually { (try? Self.create(store, "after").get()) != nil })
    }

    @Test func aDeadlineThatCutsATransactionOffAbortsTheRestOfItsBatchOnly() throws {
        // Inserting a location named "slow" takes a minute; any other name is quick.
        let (database, store, admin) = try Self.storeWithTrigger("""
            CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.name = 'slow' THEN PERFORM pg_sleep(60); END IF; RETURN NEW; END $$;
            CREATE TRIGGER slow_insert BEFORE INSERT ON locations FOR EACH ROW EXECUTE FUNCTION slow_insert();
            """)
        defer { store.close(); admin.close() }
        // One batch, one transaction: a write whose INSERT outlives every deadline of the batch, then
        // one with an earlier deadline. The waits end at the latest deadline of all the writes.
        let cut = Waiter<Location>(), after = Waiter<Location>()
        // 10 s: time for the connection, BEGIN and INSERT to come first on a busy machine.
        let deadline = PostgresConnection.monotonicNanoseconds() + 10_000_000_000
        store.submitBatch {
            for (name, callDeadline, waiter) in [("slow", deadline, cut), ("quick", deadline - 1_000_000_000, after)] {
                store.write(deadline: callDeadline, { w throws(RPCError) in
                    try Operations.createLocation(
                        CreateLocationRequest(location: Location(name: name, colorHex: "#000000")), w)
                }, completion: waiter.finish)
            }
        }
        guard case .failure(let cutError) = cut.wait() else {
            Issue.record("a write whose INSERT outlived its deadline succeeded")
            return
        }
        #expect(cutError.code == .deadlineExceeded, "\(cutError)")
        #expect(PostgresConnection.monotonicNanoseconds() >= deadline, "cut off at the latest deadline of the batch, not sooner")
        // The transaction went with the connection the deadline closed: the other write was not
        // applied, and says so with a status to retry on, not as a lost database.
        guard case .failure(let otherError) = after.wait() else {
            Issue.record("a write of a transaction that was cut off was acknowledged")
            return
        }
        #expect(otherError.code == .aborted && otherError.message.contains("retry"), "\(otherError)")
        // The database was never unreachable: the next write succeeds at once, on a new connection.
        #expect(try Self.create(store, "next").get().name == "next")
        try Self.endSleepingStatements(admin, database)
    }

    /// Audit 37 L1: a table dropped (or the database recreated empty) under a running server:
    /// calls that need it fail FAILED_PRECONDITION saying so (before: INTERNAL), and the database
    /// counts as lost (health NOT_SERVING) until it is restored.
    @Test func aDroppedTableIsAFailedPreconditionAndALostDatabase() throws {
        let database = try PostgresTestDatabase()
        let changes = LockedValue<[PostgresStore.AvailabilityChange]>([])
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false) { change in
            changes.withLock { $0.append(change) }
        })
        defer { store.close() }
        #expect(try Self.create(store, "before").get().name == "before")
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        _ = try admin.execute("ALTER TABLE locations RENAME TO locations_elsewhere")
        guard case .failure(let error) = Self.create(store, "after") else {
            Issue.record("a create into a missing table succeeded")
            return
        }
        #expect(error.code == .failedPrecondition && error.message.contains("lacks a table or column this server uses"),
                "\(error)")
        #expect(Self.eventually { !store.isAvailable }, "the database counts as lost")
        #expect(changes.withLock { $0 }.contains {
            if case .lost(let reason) = $0 { reason.contains("lacks") } else { false }
        }, "\(changes.withLock { $0 })")
        // A read that does not need the missing table succeeds, and does not make the database
        // available again (review 36 M2: health flapped with every such call).
        let groups = Waiter<ListCategoryGroupsResponse>()
        store.read({ r throws(RPCError) in try Operations.listCategoryGroups(ListCategoryGroupsRequest(), r) },
                   completion: groups.finish)
        #expect(throws: Never.self) { try groups.wait().get() }
        #expect(!store.isAvailable, "a transaction beside the missing table is not the database back")
        // Restored: served again, and available once the monitor finds every table.
        _ = try admin.execute("ALTER TABLE locations_elsewhere RENAME TO locations")
        #expect(Self.eventually { (try? Self.create(store, "restored").get()) != nil })
        #expect(Self.eventually { store.isAvailable })
    }

    /// Audit 37 M1: the waits were bounded by the deadlines of the writes run so far, so a write
    /// with a short deadline, waiting for a row lock, closed the connection and failed the writes
    /// beside it in its batch (`ABORTED`, and `DEADLINE_EXCEEDED` for calls seconds from theirs).
    /// Bounded by every write's deadline, its lock wait ends at the lock timeout of one try; it is
    /// set aside, and the others commit.
    @Test func aShortDeadlineOnALockedRowDoesNotFailTheWritesBesideIt() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false))
        defer { store.close() }
        let locked = try Self.create(store, "locked").get()
        let admin = try Self.lockingLocation(locked.id, in: database)
        defer { admin.close() }
        let blocked = Waiter<Empty>(), beside = Waiter<Location>()
        let now = PostgresConnection.monotonicNanoseconds()
        store.submitBatch {
            // Its deadline passes during its lock wait, which is at least one 100 ms try.
            store.write(deadline: now + 30_000_000, { w throws(RPCError) in
                try Operations.deleteLocation(DeleteLocationRequest(id: locked.id), w)
            }, completion: blocked.finish)
            store.write(deadline: now + 120_000_000_000, { w throws(RPCError) in
                try Operations.createLocation(CreateLocationRequest(location: Location(name: "beside", colorHex: "#000000")), w)
            }, completion: beside.finish)
        }
        #expect(try beside.wait().get().name == "beside", "the write beside it commits")
        _ = try admin.execute("ROLLBACK")
        // Tried again alone, its deadline passed: that deadline does not bound the new transaction
        // (review 36 M1: its BEGIN was cut, closing the connection), and with no router here to
        // refuse it, it runs once the lock is gone.
        #expect(throws: Never.self) { try blocked.wait().get() }
    }

    @Test func aLongLockWaitFailsThatWriteAloneAndIsNotALostDatabase() throws {
        let database = try PostgresTestDatabase()
        let changes = LockedValue<[PostgresStore.AvailabilityChange]>([])
        let store = try PostgresStore.open(url: database.url, options: .init(
            durability: .normal, seed: false, statementTimeoutSeconds: 2) { change in changes.withLock { $0.append(change) } })
        defer { store.close() }
        let before = try Self.create(store, "before").get()
        let admin = try Self.lockingLocation(before.id, in: database)
        defer { admin.close() }
        // The blocked delete and a create in one batch (one transaction).
        let blocked = Waiter<Empty>()
        let beside = Waiter<Location>()
        store.submitBatch {
            store.write({ w throws(RPCError) in try Operations.deleteLocation(DeleteLocationRequest(id: before.id), w) },
                        completion: blocked.finish)
            store.write({ w throws(RPCError) in
                try Operations.createLocation(CreateLocationRequest(location: Location(name: "beside", colorHex: "#000000")), w)
            }, completion: beside.finish)
        }
        guard case .failure(let error) = blocked.wait() else {
            Issue.record("a delete of a row locked elsewhere succeeded")
            return
        }
        #expect(error.code == .unavailable && error.message.contains("busy") && error.message.contains("lock timeout"),
                "\(error)")
        #expect(try beside.wait().get().name == "beside", "the rest of the batch commits")
        #expect(try Self.create(store, "unblocked").get().name == "unblocked")
        _ = try admin.execute("ROLLBACK")
        #expect(try admin.query("SELECT count(*) FROM locations WHERE id = $1", [.text(before.id)])
            .int64(row: 0, column: 0) == 1, "the refused delete was not applied")
        #expect(changes.withLock { $0 }.isEmpty, "no database_lost for a lock: \(changes.withLock { $0 })")
    }

    /// A row another session keeps locked holds up only the writes that need it: the writer sets
    /// the blocked write aside (with its connection's later writes, which keep their order) and
    /// commits the others; once the lock goes, the blocked write and those behind it commit.
    /// Before, the whole batch, and every write queued behind it, waited for the lock timeout.
    @Test func aLockedRowHoldsUpOnlyTheWritesThatNeedItInOrder() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false))
        defer { store.close() }
        let locked = try Self.create(store, "Locked").get()
        let admin = try Self.lockingLocation(locked.id, in: database)
        defer { admin.close() }
        // Connection 1 deletes the locked row, then creates one of the same name (a unique name:
        // it can succeed only after the delete); connection 2 creates another, in the same batch.
        let deleted = Waiter<Empty>()
        let recreated = Waiter<Location>()
        let other = Waiter<Location>()
        store.submitBatch {
            store.submit(StoreWrite(source: 1, { w throws(RPCError) in
                try Operations.deleteLocation(DeleteLocationRequest(id: locked.id), w)
            }, completion: deleted.finish))
            store.submit(StoreWrite(source: 1, { w throws(RPCError) in
                try Operations.createLocation(CreateLocationRequest(location: Location(name: "Locked", colorHex: "#000000")), w)
            }, completion: recreated.finish))
            store.submit(StoreWrite(source: 2, { w throws(RPCError) in
                try Operations.createLocation(CreateLocationRequest(location: Location(name: "Other", colorHex: "#000000")), w)
            }, completion: other.finish))
        }
        #expect(try other.wait().get().name == "Other", "the write the lock does not block commits")
        // While the lock is held (up to 9 s of waiting in all), connection 1's writes wait.
        #expect(!deleted.isFinished && !recreated.isFinished, "connection 1's writes wait for the lock, in order")
        #expect(try Self.create(store, "Meanwhile").get().name == "Meanwhile", "and so do no other writes")
        _ = try admin.execute("ROLLBACK")
        #expect(throws: Never.self) { try deleted.wait().get() }
        #expect(try recreated.wait().get().name == "Locked", "applied after the delete it came after")
        #expect(try admin.query("SELECT count(*) FROM locations WHERE id = $1", [.text(locked.id)])
            .int64(row: 0, column: 0) == 0)
    }

    /// Many connections' writes blocked on one locked row, and more arriving all the time: each
    /// fails once it has waited the limit (1.8 s here), however many keep coming, and the other
    /// writes go on meanwhile (review 18: every new blocked write put the next try off, so the
    /// first waited 78 s; and each round waited out every blocked write's lock timeout in turn).
    @Test func blockedWritesFailAtTheLimitWhileMoreKeepComing() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresStore.open(url: database.url, options: .init(
            durability: .normal, seed: false, statementTimeoutSeconds: 2))
        defer { store.close() }
        let locked = try Self.create(store, "Locked").get()
        let admin = try Self.lockingLocation(locked.id, in: database)
        defer { admin.close() }
        defer { _ = try? admin.execute("ROLLBACK") }
        func delete(from source: UInt64, _ waiter: Waiter<Empty>) {
            store.submit(StoreWrite(source: source, { w throws(RPCError) in
                try Operations.deleteLocation(DeleteLocationRequest(id: locked.id), w)
            }, completion: waiter.finish))
        }
        let first = Waiter<Empty>()
        delete(from: 1, first)
        var others: [Waiter<Empty>] = []
        var unrelated = 0
        var firstAnsweredDuringStream = false
        // A new blocked write every 30 ms, and unrelated creates in between, until the first is
        // answered: at most 30 s (16× the limit, and well under the 78 s of the bug).
        let end = Date().addingTimeInterval(30)
        var source: UInt64 = 100
        while Date() < end && !firstAnsweredDuringStream {
            let waiter = Waiter<Empty>()
            delete(from: source, waiter)
            others.append(waiter)
            source += 1
            if case .success = Self.create(store, "u\(source)") { unrelated += 1 }
            if first.isFinished { firstAnsweredDuringStream = true }
            usleep(30_000)
        }
        #expect(firstAnsweredDuringStream, "the first blocked write was answered while more kept coming")
        guard case .failure(let error) = first.wait() else {
            Issue.record("a delete of a row locked elsewhere succeeded")
            return
        }
        #expect(error.code == .unavailable && error.message.contains("lock timeout"), "\(error)")
        #expect(unrelated > 0, "other writes committed while the row was locked")
        _ = try admin.execute("ROLLBACK")
        // Once the lock is gone, the deletes still waiting find the row: one applies, the others NOT_FOUND.
        let results = others.map { $0.wait() }
        #expect(results.allSatisfy { result in
            if case .failure(let error) = result { return [.unavailable, .notFound].contains(error.code) }
            return true
        })
    }

    /// An administrator who puts a schema of their own in front of the database's search_path
    /// (audit 16 M2): a new server refused to start on an empty dataset beside the real one
    /// (before, it migrated and seeded the new schema and served that), and a running one keeps
    /// its tables after reconnecting, its search_path pinned (before, an acknowledged record
    /// then read NOT_FOUND).
    @Test func aSearchPathChangedUnderTheServerDoesNotMoveItToOtherTables() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false))
        defer { store.close() }
        #expect(store.schema == "public")
        let kept = try Self.create(store, "Kept").get()
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        _ = try admin.execute("CREATE SCHEMA other")
        _ = try admin.execute("ALTER DATABASE \"\(database.name)\" SET search_path = other, public")
        // A table of that name in front: an unpinned session would now read this one.
        _ = try admin.execute("CREATE TABLE other.locations (LIKE public.locations INCLUDING ALL)")
        do {
            let second = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false))
            second.close()
            Issue.record("a server started on the empty schema in front")
        } catch {
            #expect(error.code == .failedPrecondition, "\(error)")
            #expect(error.message.contains("schema \"other\"") && error.message.contains("public"), "\(error)")
        }
        try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = $1 AND application_name = 'larder-server'
            """, [.text(database.name)])
        var found: Location?
        #expect(Self.eventually {
            found = try? PostgresStoreTests.list(store).first { $0.id == kept.id }
            return found != nil
        }, "the record acknowledged before is still there after reconnecting")
        #expect(try admin.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'other'").int64(row: 0, column: 0) == 1,
                "nothing was migrated into the schema in front")
    }

    /// A statement PostgreSQL cancels (a statement_timeout an administrator set, here on the
    /// database) was never larder's own deadline: UNAVAILABLE, not applied (audit 16 L2; before,
    /// DEADLINE_EXCEEDED, even for a call without a deadline).
    @Test func aStatementTheServerCancelsIsUnavailableNotADeadline() throws {
        let database = try PostgresTestDatabase()
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        _ = try admin.execute("ALTER DATABASE \"\(database.name)\" SET statement_timeout = '300ms'")
        let store = try PostgresStore.open(url: database.url, options: .init(durability: .normal, seed: false))
        defer { store.close() }
        _ = try admin.execute("BEGIN")
        _ = try admin.execute("LOCK TABLE locations IN ACCESS EXCLUSIVE MODE")
        defer { _ = try? admin.execute("ROLLBACK") }
        let error = #expect(throws: RPCError.self) { try PostgresStoreTests.list(store) }
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect(error?.message.contains("statement_timeout") == true, "\(String(describing: error))")
    }

    /// A read a table lock stops fails alone: the reads after it in its batch get a new read
    /// transaction (audit 16 M1: they failed ABORTED, "the transaction conflicted with a
    /// concurrent one", PostgreSQL having ended the transaction for the failed statement).
    @Test func aReadATableLockStopsFailsAloneInItsBatch() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresStore.open(url: database.url, options: .init(
            durability: .normal, seed: false, readerCount: 1, statementTimeoutSeconds: 2))
        defer { store.close() }
        _ = try Self.create(store, "Pantry").get()
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        _ = try admin.execute("BEGIN")
        _ = try admin.execute("LOCK TABLE meal_records IN ACCESS EXCLUSIVE MODE")
        let meals = Waiter<EncodedListMealRecordsResponse>()
        let locations = Waiter<Int>()
        store.submitBatch {
            store.read(.query, { r throws(RPCError) in try Operations.listMealRecords(ListMealRecordsRequest(), r) },
                       completion: meals.finish)
            store.read(.query, { r throws(RPCError) in
                try Operations.listLocations(ListLocationsRequest(), r).locations.count
            }, completion: locations.finish)
        }
        if case .failure(let error) = meals.wait() {
            #expect(error.code == .unavailable && error.message.contains("lock timeout"), "\(error)")
        } else {
            Issue.record("a list of a locked table succeeded")
        }
        #expect(try locations.wait().get() == 1, "the read after it in the batch is served")
        _ = try admin.execute("ROLLBACK")
    }

    /// Both timeouts are 20 s, not the defaults: the store and its monitor must connect a fresh
    /// backend, and have it answer, within them for the database not to count as lost. A busy
    /// box (PostgreSQL serving the rest of the suite) took longer than 2 s to answer once, the
    /// test failed again in CI with only the statement timeout raised to 10 s, and once here
    /// with both at 10 s: a fresh backend did not answer within 10 s beside a full rebuild.
    @Test func aFrozenServerCostsTheStatementTimeoutNotMinutes() throws {
        let database = try PostgresTestDatabase()
        let changes = LockedValue<[PostgresStore.AvailabilityChange]>([])
        let store = try PostgresStore.open(url: database.url, options: .init(
            durability: .normal, connectTimeoutSeconds: 20, statementTimeoutSeconds: 20) { change in
                changes.withLock { $0.append(change) }
            })
        defer { store.close() }
        #expect(try Self.create(store, "before").get().name == "before")
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        // The monitor connects on a thread of its own: wait until it is there too.
        var frozen: [Int32] = []
        #expect(try Self.eventually {
            frozen = try Self.backends(admin, database)
            return frozen.count == 4
        }, "writer, two readers and the monitor: \(frozen)")
        for pid in frozen { try #require(kill(pid, SIGSTOP) == 0, "the test cluster must run on this machine") }
        defer { for pid in frozen { kill(pid, SIGCONT) } }

        // Without bounds this write would wait until SIGCONT, forever.
        let started = Date()
        let stalled = Self.create(store, "frozen")
        #expect(Date().timeIntervalSince(started) < 60)
        guard case .failure(let error) = stalled else {
            Issue.record("a write on a frozen backend succeeded")
            return
        }
        #expect(error.code == .unavailable, "\(error)")
        #expect(error.message.contains("did not answer within"), "\(error)")

        // A call with a deadline stops at it: a read on the frozen readers.
        let waiter = Waiter<ListLocationsResponse>()
        let deadline = PostgresConnection.monotonicNanoseconds() + 1_000_000_000
        store.read({ r throws(RPCError) in
            r.boundWaits(byDeadline: deadline)
            return try Operations.listLocations(ListLocationsRequest(), r)
        }, completion: waiter.finish)
        if case .failure(let error) = waiter.wait() {
            #expect([.deadlineExceeded, .unavailable].contains(error.code), "\(error)")
        }

        // The frozen connections were dropped; new ones (new backends) serve the calls. The
        // database itself took new connections all along, so it never counted as lost (health
        // stayed SERVING): a connection is lost, the database only when reconnecting fails.
        #expect(Self.eventually { (try? Self.create(store, "after").get()) != nil })
        // The monitor too: its probe on the frozen backend timed out, and it asked again on a
        // new one. Wait for that answer, so the check below covers the monitor's handling.
        #expect(try Self.eventually(60) {
            let rows = try admin.query("""
                SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'larder-server-monitor'
                  AND state = 'idle' AND query LIKE 'SELECT current_setting(''transaction_read_only'')%'
                """, [.text(database.name)])
            return try (0..<rows.rowCount).contains { !frozen.contains(Int32(try rows.int64(row: $0, column: 0))) }
        }, "the monitor probes on a new connection")
        #expect(changes.withLock { $0 }.isEmpty, "\(changes.withLock { $0 })")
    }
}
