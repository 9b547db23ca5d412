import LarderPostgres

/// Which database `larder-server` serves from and how it uses it, with the defaults.
public struct DatabaseConfiguration: Sendable {
    /// SQLite file path (created when missing), or a `postgres://` / `postgresql://` URL.
    public var databasePath = "./larder.sqlite"
    /// `full`: fsync on every commit (an OK survives power loss); `normal`: WAL sync at checkpoints
    /// (SQLite) or `synchronous_commit=off` (PostgreSQL).
    public var durability = Durability.full
    /// Fill a new database with the default groups, categories and locations.
    public var seed = true
    /// Reader connections (threads) for read calls.
    public var readerCount = 2
    /// SQLite only: how long a statement waits for another process's lock (`PRAGMA busy_timeout`).
    public var busyTimeoutSeconds = 5

    public init() {}

    /// The database for logs: the SQLite path, or the PostgreSQL URL without its password.
    public var databaseDescription: String { PostgresURL.redacted(databasePath) }

    /// How hard a commit tries to reach the disk before the OK goes out.
    public enum Durability: String, Sendable, CaseIterable {
        /// `PRAGMA synchronous=FULL`: fsync on every commit.
        case full
        /// `PRAGMA synchronous=NORMAL`: WAL synced at checkpoints; an OS crash may lose the last commits.
        /// On PostgreSQL, `synchronous_commit=off`: a database-server crash may lose the last commits.
        case normal
    }
}
