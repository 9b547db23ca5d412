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
        /// How long connecting may take before it fails.
        public var connectTimeoutSeconds: Int
        /// Shown in `pg_stat_activity.application_name` (the URL may override it).
        public var applicationName: String

        public init(durability: Durability = .full, seed: Bool = true, readerCount: Int = 2,
                    maxWriteBatch: Int = 512, connectTimeoutSeconds: Int = 10,
                    applicationName: String = "larder-server") {
            self.durability = durability
            self.seed = seed
            self.readerCount = readerCount
            self.maxWriteBatch = maxWriteBatch
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.applicationName = applicationName
        }
    }
}
