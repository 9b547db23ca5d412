public import LarderReactor
public import LarderWire

/// How the server serves, with the defaults: addresses, limits, timeouts, auth and logging.
/// Which database it serves from is chosen outside, by whoever opens the `Store`
/// (`larder-server`: `LarderServerMain.DatabaseConfiguration`).
public struct ServerConfiguration: Sendable {
    /// Address to listen on; loopback by default.
    public var listen = SocketAddress(host: "127.0.0.1", port: 7411)
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
}
