import LarderAPI
public import LarderStore
public import LarderWire

/// The PostgreSQL `Store`: one writer connection doing group commit and a pool
/// of reader connections, each on a thread of its own (`StoreExecutor`).
///
/// Any number of server processes may open the same database: each keeps only
/// its connections, PostgreSQL's locks and constraints keep the data consistent
/// across them (a unique name taken by another replica is ALREADY_EXISTS), and
/// migrations and the default data run exactly once, under an advisory lock.
public final class PostgresStore: Store {
    private let executor: StoreExecutor
    private let availability: PostgresAvailability
    private let monitor: PostgresMonitor
    /// The database URL without its password.
    public let target: String
    /// The schema that holds larder's tables (every session's search_path is pinned to it).
    public let schema: String

    private init(target: String, schema: String, executor: StoreExecutor, availability: PostgresAvailability,
                 monitor: PostgresMonitor) {
        self.target = target
        self.schema = schema
        self.executor = executor
        self.availability = availability
        self.monitor = monitor
    }

    /// False from the moment a connection (or the monitor, within `Options.monitorInterval`)
    /// finds the database unreachable or read-only, until one succeeds again.
    public var isAvailable: Bool { availability.isAvailable }

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database[?…]`),
    /// migrates the schema (seeding a new database when `options.seed`), and opens
    /// the reader pool.
    ///
    /// - Throws: UNAVAILABLE when the server cannot be reached, PERMISSION_DENIED
    ///   when it refuses the login, FAILED_PRECONDITION when the schema is newer
    ///   than this build, ABORTED when migrating kept conflicting with other replicas.
    public static func open(url: String, options: Options = Options()) throws(RPCError) -> PostgresStore {
        let target = PostgresURL.redacted(url)
        do throws(PostgresError) {
            let timeout = UInt64(options.statementTimeoutSeconds) * 1_000_000_000
            let connect = { @Sendable () throws(PostgresError) -> PostgresConnection in
                let connection = try PostgresConnection(url: url, applicationName: options.applicationName,
                                                        connectTimeoutSeconds: options.connectTimeoutSeconds)
                connection.statementTimeoutNanoseconds = timeout
                return connection
            }
            let availability = PostgresAvailability(onChange: options.onAvailabilityChange)
            // No server-side statement_timeout: one firing while a COMMIT waits for a synchronous
            // standby makes PostgreSQL report the COMMIT as done although no standby has it. A
            // lock_timeout covers only waits for locks (not for a standby), so it is safe.
            let lockTimeout = "SET lock_timeout = '\(options.lockTimeoutMilliseconds)ms'"
            // The writer waits for a lock only briefly at a time: a write held up is set aside and
            // tried again while the rest of the writes go on (StoreExecutor), up to the same total.
            let writerLockTimeout = "SET lock_timeout = '\(options.writeLockTryMilliseconds)ms'"
            let writerConnection = try connect()
            let schema: String
            do throws(PostgresError) {
                schema = try PostgresMigrator.resolveSchema(on: writerConnection)
            } catch {
                writerConnection.close()
                throw error
            }
            let searchPath = PostgresMigrator.pinSearchPath(schema)
            let setup = [searchPath, writerLockTimeout]
                + (options.durability == .normal ? ["SET synchronous_commit TO off"] : [])
            // Migrating may take long: only the server's own limits apply to it.
            writerConnection.statementTimeoutNanoseconds = nil
            let writer = try PostgresSession(connection: writerConnection, setup: setup, availability: availability)
            do throws(PostgresError) {
                try PostgresMigrator(session: writer, lockTimeoutSeconds: options.migrationLockTimeoutSeconds,
                                     onLockBusy: options.onMigrationLockBusy, onMigrated: options.onMigrated)
                    .migrate(seed: options.seed)
            } catch {
                writer.close()
                throw error
            }
            writerConnection.statementTimeoutNanoseconds = timeout
            var readers: [any StoreConnection] = []
            do throws(PostgresError) {
                for _ in 0..<max(1, options.readerCount) {
                    readers.append(try PostgresSession(connection: try connect(), setup: [searchPath, lockTimeout],
                                                       availability: availability))
                }
            } catch {
                for reader in readers { reader.close() }
                writer.close()
                throw error
            }
            let executor = StoreExecutor(writer: writer, readers: readers, options: StoreExecutor.Options(
                maxWriteBatch: options.maxWriteBatch,
                lockWaitLimitNanoseconds: UInt64(options.lockTimeoutMilliseconds) * 1_000_000))
            let monitor = PostgresMonitor(interval: options.monitorInterval, availability: availability) {
                () throws(PostgresError) -> PostgresConnection in
                let probe = try PostgresConnection(url: url, applicationName: options.applicationName + "-monitor",
                                                   connectTimeoutSeconds: options.connectTimeoutSeconds)
                probe.statementTimeoutNanoseconds = 2_000_000_000
                return probe
            }
            return PostgresStore(target: target, schema: schema, executor: executor, availability: availability,
                                 monitor: monitor)
        } catch {
            let refusals = [PostgresMigrator.newerSchemaState, PostgresMigrator.foreignTablesState,
                            PostgresMigrator.shadowedSchemaState, PostgresMigrator.missingRelationsState, "3F000"]
            var rpc = refusals.contains(error.sqlState) ? RPCError.failedPrecondition(error.message) : error.rpcError
            // For the operator starting the server, not a client: PostgreSQL's own words.
            if rpc.code == .internal { rpc.message = error.description }
            if !rpc.message.contains(target) { rpc.message = "database \"\(target)\": " + rpc.message }
            throw rpc
        }
    }

    public func submitBatch(_ body: () -> Void) { executor.submitBatch(body) }

    public func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) {
        executor.setCompletionsDelivered(body)
    }

    public func submit(_ read: StoreRead, cost: ReadCost) { executor.submit(read, cost: cost) }

    public func submit(_ write: StoreWrite) { executor.submit(write) }

    /// Fails queued work (UNAVAILABLE, not run), lets running work finish, then closes every
    /// connection. Idempotent.
    public func close() {
        executor.close()
        monitor.stop()
    }
}
