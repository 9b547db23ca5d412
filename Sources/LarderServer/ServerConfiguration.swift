import LarderPostgres
import LarderReactor
import LarderWire

/// Everything `larder-server` can be told, with the defaults.
public struct ServerConfiguration: Sendable {
    /// Address to listen on; loopback by default.
    public var listen = SocketAddress(host: "127.0.0.1", port: 7411)
    /// SQLite file path (created when missing), or a `postgres://` / `postgresql://` URL.
    public var databasePath = "./larder.sqlite"
    /// `full`: fsync on every commit (an OK survives power loss); `normal`: WAL sync at checkpoints
    /// (SQLite) or `synchronous_commit=off` (PostgreSQL).
    public var durability = Durability.full
    /// Fill a new database with the default groups, categories and locations.
    public var seed = true
    /// Reader connections (threads) for read calls.
    public var readerCount = 2
    /// Largest frame a peer may send.
    public var maxFrameBytes = Frame.defaultMaxSize
    /// Open connections beyond which new ones are refused.
    public var maxConnections = 10_000
    /// Calls in flight on one connection beyond which extra calls get RESOURCE_EXHAUSTED.
    public var maxCallsPerConnection = 1024
    /// Bytes of replies buffered for one connection beyond which the server stops reading from it.
    public var maxBufferedOutputBytes = 8 * 1024 * 1024
    /// Bytes all connections together may hold in unwritten replies and undecoded requests;
    /// past it, the connections holding more than their share get no new calls.
    public var memoryBudgetBytes = 256 * 1024 * 1024
    /// Seconds a connection may leave replies unread (no byte written to it) before it is dropped; 0 = never.
    public var writeStallTimeoutSeconds = 30
    /// Seconds a connection may stay silent with no call in flight before it is closed; 0 = never.
    public var idleTimeoutSeconds = 300
    /// Seconds a peer may take to finish a frame it has started.
    public var frameTimeoutSeconds = 10
    /// Seconds to finish calls in flight on shutdown.
    public var drainTimeoutSeconds = 10
    /// SQLite only: how long a statement waits for another process's lock (`PRAGMA busy_timeout`).
    public var busyTimeoutSeconds = 5
    /// Minimum level of log lines.
    public var logLevel = Logger.Level.info
    /// Log every call (method, status, duration) at info level.
    public var accessLog = false
    /// File holding the bearer token every call but health must carry; nil = no auth.
    public var authTokenFile: String?
    /// Allow listening on a non-loopback address without a token.
    public var insecure = false
    /// Where to serve Prometheus metrics over HTTP (`GET /metrics`); nil = nowhere.
    public var metricsListen: SocketAddress?

    public init() {}

    /// The database for logs: the SQLite path, or the PostgreSQL URL without its password.
    public var databaseDescription: String { PostgresURL.redacted(databasePath) }

    /// Rejects combinations that are unsafe: a non-loopback address with no
    /// token, unless `insecure` says the operator means it.
    public func validate() throws(RPCError) {
        if authTokenFile == nil && !listen.isLoopback && !insecure {
            throw RPCError.failedPrecondition(
                "refusing to listen on non-loopback address \(listen) without --auth-token-file; "
                    + "pass --insecure to do it anyway")
        }
        if let metricsListen, !metricsListen.isLoopback && !insecure {
            throw RPCError.failedPrecondition(
                "refusing to serve metrics (no auth) on non-loopback address \(metricsListen); "
                    + "pass --insecure to do it anyway")
        }
    }

    /// How hard a commit tries to reach the disk before the OK goes out.
    public enum Durability: String, Sendable, CaseIterable {
        /// `PRAGMA synchronous=FULL`: fsync on every commit.
        case full
        /// `PRAGMA synchronous=NORMAL`: WAL synced at checkpoints; an OS crash may lose the last commits.
        /// On PostgreSQL, `synchronous_commit=off`: a database-server crash may lose the last commits.
        case normal
    }
}
