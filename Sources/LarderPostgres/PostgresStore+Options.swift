extension PostgresStore {
    /// How `PostgresStore.open` connects and sets up the database.
    public struct Options: Sendable {
        /// When PostgreSQL acknowledges a commit.
        public enum Durability: Sendable {
            /// `synchronous_commit` left at the server's setting (on by default): a commit
            /// is flushed to the WAL before the OK goes out.
            case full
            /// `SET synchronous_commit TO off` on the writer: a crash of the PostgreSQL
            /// server may lose the last commits (never corrupts). Much faster per commit.
            case normal
        }

        public var durability: Durability
        /// Fill a new database with the default data (once, by whichever replica migrates it).
        public var seed: Bool
        /// How many reader connections (and threads) serve reads; at least 1.
        public var readerCount: Int
        /// The most writes committed together in one transaction.
        public var maxWriteBatch: Int
        /// How long connecting to one host may take before it fails (libpq's
        /// `connect_timeout`, at least 2; a URL parameter overrides it).
        public var connectTimeoutSeconds: Int
        /// How long one statement may wait for PostgreSQL's answer (client side) before
        /// its connection is dropped and the call fails UNAVAILABLE; calls with a shorter
        /// deadline stop there. (Not the server's `statement_timeout`: see `open`.)
        public var statementTimeoutSeconds: Int
        /// How long a statement may wait for a lock another session holds: the readers'
        /// `lock_timeout`, and a write's wait in all (tried `writeLockTryMilliseconds` at a time).
        /// Nine tenths of the statement timeout, so it fails on its own (55P03, that call alone
        /// UNAVAILABLE, the connection kept) before the client-side limit would take it for a
        /// server that stopped answering.
        public var lockTimeoutMilliseconds: Int { statementTimeoutSeconds * 900 }
        /// The writer's `lock_timeout`: how long one try of a write waits for a lock another
        /// session holds before the writer sets it aside, commits the rest of its batch, and tries
        /// it again later (until it has waited `lockTimeoutMilliseconds` in all). Short, so that
        /// a row someone keeps locked holds up only the writes that need it.
        public var writeLockTryMilliseconds = 100
        /// How long startup waits for the schema migration lock (and the locks its statements
        /// take) while another replica migrates or a session holds it; then `open` fails
        /// UNAVAILABLE (busy) instead of hanging.
        public var migrationLockTimeoutSeconds: Int
        /// How often a connection of its own checks that the database is there and takes writes (for health).
        public var monitorInterval: Duration
        /// Told when the database is lost and when it is back (on a store thread; keep it quick).
        public var onAvailabilityChange: @Sendable (AvailabilityChange) -> Void
        /// Shown in `pg_stat_activity.application_name` (the URL may override it).
        public var applicationName: String
        /// Told when `open` migrated the database: from which schema version (0: an empty
        /// database, created and seeded) to which, and how long it took.
        public var onMigrated: @Sendable (_ from: Int, _ to: Int, _ milliseconds: Int) -> Void = { _, _, _ in }
        /// Told when `open` finds the migration lock taken (another replica migrating) and waits
        /// for it, up to `migrationLockTimeoutSeconds`.
        public var onMigrationLockBusy: @Sendable () -> Void = {}

        public init(durability: Durability = .full, seed: Bool = true, readerCount: Int = 2,
                    maxWriteBatch: Int = 512, connectTimeoutSeconds: Int = 3, statementTimeoutSeconds: Int = 10,
                    migrationLockTimeoutSeconds: Int = 60, monitorInterval: Duration = .seconds(1),
                    applicationName: String = "larder-server",
                    onAvailabilityChange: @escaping @Sendable (AvailabilityChange) -> Void = { _ in }) {
            self.durability = durability
            self.seed = seed
            self.readerCount = readerCount
            self.maxWriteBatch = maxWriteBatch
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.statementTimeoutSeconds = max(1, statementTimeoutSeconds)
            self.migrationLockTimeoutSeconds = max(1, migrationLockTimeoutSeconds)
            self.monitorInterval = monitorInterval
            self.onAvailabilityChange = onAvailabilityChange
            self.applicationName = applicationName
        }
    }

    /// A change in whether the database can be reached (and takes writes).
    public enum AvailabilityChange: Sendable, Equatable {
        /// No connection could reach the database, or it turned read-only; why.
        case lost(reason: String)
        /// The database answers again after `unavailableSeconds`.
        case regained(unavailableSeconds: Double)
    }
}
