#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderStore
import LarderWire

/// Brings a database to `PostgresSchema.latestVersion` in one transaction,
/// seeding a new database in that same transaction.
///
/// Replicas starting together serialize on a transaction-scoped advisory lock,
/// so exactly one of them migrates and seeds; the others then find the schema
/// current. On engines without advisory locks the primary key of
/// `schema_migrations` decides the race instead, and the loser retries.
struct PostgresMigrator {
    let session: PostgresSession
    /// The longest wait for a lock (the migration lock, or a table's); then 55P03.
    var lockTimeoutSeconds = 60
    /// Told when the migration lock is taken and this start waits for it (up to `lockTimeoutSeconds`).
    var onLockBusy: () -> Void = {}
    /// Told after a migration committed: from which version to which, and how long it took.
    var onMigrated: (_ from: Int, _ to: Int, _ milliseconds: Int) -> Void = { _, _, _ in }
    /// How often a migration that lost a race is tried again.
    static let attempts = 5
    /// The SQLSTATE this backend uses for "schema newer than this build".
    static let newerSchemaState = "LR001"
    /// The SQLSTATE for "a database never migrated holds tables of our names" (another application's).
    static let foreignTablesState = "LR002"
    /// The SQLSTATE for "the schema larder would use has no larder tables, but one later on the
    /// search_path has": starting there would serve an empty dataset beside the real one.
    static let shadowedSchemaState = "LR003"
    /// The SQLSTATE for "the schema is stamped with the latest version but lacks tables or
    /// indexes that version has" (changed outside larder).
    static let missingRelationsState = "LR004"
    /// The tables and indexes a database at the latest version holds.
    static let latestRelationNames = SchemaRelationNames.present(after: PostgresSchema.migrations)

    /// The schema larder's tables live in: the session's `current_schema()` (the first schema of
    /// its search_path that exists). Every session then pins its search_path to it, so a
    /// search_path an administrator changes later cannot move a running server to other tables.
    /// - Throws: FAILED_PRECONDITION (LR003) when that schema has no larder tables but a schema
    ///   later on the search_path has (an administrator put a schema of their own in front);
    ///   a clear error when no schema of the search_path exists.
    static func resolveSchema(on connection: PostgresConnection) throws(PostgresError) -> String {
        let found = try connection.query("""
            SELECT current_schema()::text,
                   coalesce((SELECT string_agg(s, ', ') FROM unnest(current_schemas(false)) AS s
                             WHERE s <> current_schema()
                               AND to_regclass(quote_ident(s) || '.schema_migrations') IS NOT NULL), ''),
                   to_regclass(quote_ident(current_schema()) || '.schema_migrations') IS NOT NULL,
                   current_setting('search_path')
            """)
        guard !found.isNull(row: 0, column: 0) else {
            throw PostgresError(sqlState: "3F000", message: "no schema of this session's search_path (\""
                + found.string(row: 0, column: 3) + "\") exists, so larder has nowhere to keep its tables: "
                + "create it, or set search_path (e.g. options=-csearch_path%3Dpublic in the URL)")
        }
        let schema = found.string(row: 0, column: 0)
        let shadowed = found.string(row: 0, column: 1)
        let migratedHere = found.string(row: 0, column: 2) == "t"
        guard migratedHere || shadowed.isEmpty else {
            throw PostgresError(sqlState: shadowedSchemaState, message: "schema \"\(schema)\", the first of this "
                + "session's search_path (\(found.string(row: 0, column: 3))), has no larder tables, but \(shadowed) "
                + "later on it does: larder would start an empty dataset beside its data there. Set the search_path "
                + "to the schema that holds them (e.g. options=-csearch_path%3D\(shadowed.split(separator: ",")[0]) "
                + "in the URL, or ALTER ROLE … SET search_path), or drop the schema in front")
        }
        return schema
    }

    /// `SET search_path` to `schema` alone, quoted as an identifier.
    static func pinSearchPath(_ schema: String) -> String {
        "SET search_path TO \"" + schema.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"")
            + "\""
    }
    /// Every table and index the migrations create, for that check.
    static let relationNames = SchemaRelationNames.created(by: PostgresSchema.migrations)

    func migrate(seed: Bool) throws(PostgresError) {
        var attempt = 1
        while true {
            do throws(PostgresError) {
                let started = PostgresConnection.monotonicNanoseconds()
                if let from = try migrateOnce(seed: seed) {
                    onMigrated(from, PostgresSchema.latestVersion,
                               Int((PostgresConnection.monotonicNanoseconds() - started) / 1_000_000))
                }
                return
            } catch {
                session.rollback()
                let raced = error.isTransient || error.sqlState == PostgresError.uniqueViolation
                    || error.sqlState == PostgresError.duplicateTable
                guard raced, attempt < Self.attempts else { throw error }
                attempt += 1
            }
        }
    }

    /// Migrates to the latest version; the version it found when it did, nil when it was current.
    private func migrateOnce(seed: Bool) throws(PostgresError) -> Int? {
        let connection = session.connection
        try connection.execute("BEGIN")
        // Migrating a big table may take longer than the statement timeout of normal calls.
        try connection.execute("SET LOCAL statement_timeout = 0")
        try connection.execute("SET LOCAL lock_timeout = '\(lockTimeoutSeconds)s'")
        let current: PostgresResult
        do throws(PostgresError) {
            try lock()
            try connection.execute(PostgresSchema.migrationsTable)
            try refuseForeignMigrationsTable()
            // Reading the table waits too while a session holds a lock on it.
            current = try connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations")
        } catch where error.sqlState == PostgresError.lockNotAvailable {
            throw PostgresError(sqlState: PostgresError.lockNotAvailable, message: "waited \(lockTimeoutSeconds) s for the "
                + "schema migration lock: another larder-server is migrating this database, or a session holds "
                + "pg_advisory_xact_lock(\(PostgresSchema.migrationLockKey)) or a lock on schema_migrations; "
                + "start again once it is released")
        }
        let version = Int(try current.int64(row: 0, column: 0))
        guard version <= PostgresSchema.latestVersion else {
            throw PostgresError(sqlState: Self.newerSchemaState,
                                message: "schema version \(version) is newer than this build supports "
                                    + "(\(PostgresSchema.latestVersion)); upgrade larder")
        }
        guard version < PostgresSchema.latestVersion else {
            try refuseMissingRelations(version: version)
            try connection.execute("COMMIT")
            return nil
        }
        if version == 0 { try refuseForeignTables() }
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let now = Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
        for (index, migration) in PostgresSchema.migrations.enumerated() where index >= version {
            try connection.execute(migration)
            try connection.query("INSERT INTO schema_migrations (version, applied_at_ms) VALUES ($1, $2)",
                                 [.int64(Int64(index + 1)), .int64(now)])
        }
        if version == 0 && seed {
            do throws(RPCError) {
                try SeedData.insert(into: session)
            } catch {
                throw PostgresError(sqlState: "XX000", message: "seeding failed: \(error)")
            }
        }
        let committed = try connection.execute("COMMIT")
        guard committed.commandStatus != "ROLLBACK" else {
            throw PostgresError(sqlState: PostgresError.serializationFailure, message: "the migration was rolled back")
        }
        return version
    }

    /// A database larder never migrated (no schema_migrations row) that already holds a table or
    /// index of one of our names belongs to another application: refused, naming them, instead
    /// of failing half way through the first migration's DDL.
    private func refuseForeignTables() throws(PostgresError) {
        let found = try session.connection.query(
            "SELECT coalesce(string_agg(relname::text, ', ' ORDER BY relname), ''), current_schema()::text "
                + "FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = ANY($1::text[])",
            [.text("{" + Self.relationNames.joined(separator: ",") + "}")])
        let names = found.string(row: 0, column: 0)
        guard !names.isEmpty else { return }
        let schema = found.string(row: 0, column: 1)
        throw PostgresError(sqlState: Self.foreignTablesState, message: "schema \"\(schema)\" already holds \(names), "
            + "which larder did not create (it has no schema_migrations row): give larder a database of its own "
            + "(CREATE DATABASE larder OWNER …), or drop these if they are left from a failed attempt")
    }

    /// A `schema_migrations` of another tool's (golang-migrate's `version bigint, dirty boolean`,
    /// Rails' `version varchar`, …) is not read for a version: refused, naming its columns. Before,
    /// its versions were taken for larder's, and the start failed INTERNAL half way through a
    /// migration, or with advice to restore a backup or to upgrade larder (audit 37 L2).
    private func refuseForeignMigrationsTable() throws(PostgresError) {
        let found = try session.connection.query("""
            SELECT coalesce(string_agg(attname::text || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum), ''),
                   current_schema()::text
            FROM pg_attribute WHERE attrelid = to_regclass('schema_migrations') AND attnum > 0 AND NOT attisdropped
            """)
        let columns = found.string(row: 0, column: 0)
        guard columns != "version bigint, applied_at_ms bigint" else { return }
        throw PostgresError(sqlState: Self.foreignTablesState, message: "schema \"\(found.string(row: 0, column: 1))\" "
            + "holds a schema_migrations table that is not larder's (columns: \(columns)): another application's "
            + "migrations (golang-migrate, Rails, …). Give larder a database of its own (CREATE DATABASE larder OWNER …), "
            + "or a schema of its own (options=-csearch_path%3Dlarder in the URL, once CREATE SCHEMA larder is made)")
    }

    /// A database at the latest version that lacks a table or index of it (dropped by hand):
    /// refused by name at start, rather than serving and failing every call on it INTERNAL.
    private func refuseMissingRelations(version: Int) throws(PostgresError) {
        let found = try session.connection.query(
            "SELECT coalesce(string_agg(relname::text, ','), '') FROM pg_class "
                + "WHERE relnamespace = current_schema()::regnamespace AND relname = ANY($1::text[])",
            [.text("{" + Self.latestRelationNames.sorted().joined(separator: ",") + "}")])
        let present = Set(found.string(row: 0, column: 0).split(separator: ",").map(String.init))
        let missing = Self.latestRelationNames.subtracting(present).sorted()
        guard !missing.isEmpty else { return }
        throw PostgresError(sqlState: Self.missingRelationsState, message: "the database is stamped with schema "
            + "version \(version) but lacks \(missing.joined(separator: ", ")), which that version has: it was changed "
            + "outside larder; restore it from a backup, or recreate what is missing")
    }

    /// Takes the migration lock until the transaction ends; skipped (inside a
    /// savepoint) on engines that have no advisory locks.
    private func lock() throws(PostgresError) {
        let connection = session.connection
        try connection.execute("SAVEPOINT migration_lock")
        do throws(PostgresError) {
            let taken = try connection.query("SELECT pg_try_advisory_xact_lock($1)", [.int64(PostgresSchema.migrationLockKey)])
            if taken.string(row: 0, column: 0) != "t" {
                onLockBusy()
                try connection.query("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresSchema.migrationLockKey)])
            }
            try connection.execute("RELEASE SAVEPOINT migration_lock")
        } catch {
            guard error.sqlState == PostgresError.undefinedFunction || error.sqlState == "0A000" else { throw error }
            try connection.execute("ROLLBACK TO SAVEPOINT migration_lock; RELEASE SAVEPOINT migration_lock")
        }
    }
}
