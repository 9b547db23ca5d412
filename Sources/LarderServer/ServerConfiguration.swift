package import LarderHTTP2
public import LarderReactor
public import LarderTLS
public import LarderWire

/// How the server serves, with the defaults: addresses, limits, timeouts, auth and logging.
/// Which database it serves from is chosen outside, by whoever opens the `Store`
/// (`larder-server`: `LarderServerMain.DatabaseConfiguration`).
public struct ServerConfiguration: Sendable {
    /// Address to listen on; loopback by default.
    public var listen = SocketAddress(host: "127.0.0.1", port: 7411)
    /// Largest frame a peer may send; within `maxFrameBytesRange`.
    public var maxFrameBytes = Frame.defaultMaxSize
    /// The values `maxFrameBytes` may take: up to `Frame.maxConfigurableSize` (256 MiB), so
    /// that no lean frame begins with the byte of a TLS record or the HTTP/2 preface.
    public static let maxFrameBytesRange = 64...Frame.maxConfigurableSize
    /// Open connections beyond which new ones are refused.
    public var maxConnections = 10_000
    /// Calls in flight on one connection beyond which extra calls get RESOURCE_EXHAUSTED.
    public var maxCallsPerConnection = 1024
    /// Changes the HTTP/2 session settings the server derives from the rest (`Server.http2Configuration`):
    /// for tests, which tighten the abuse buckets to reach them with few frames.
    package var adjustHTTP2: @Sendable (inout GRPCServerConfiguration) -> Void = { _ in }
    /// Bytes of replies buffered for one connection beyond which the server stops reading from it.
    public var maxBufferedOutputBytes = 8 * 1024 * 1024
    /// Bytes all connections together may hold in unwritten replies and undecoded requests;
    /// past it, the connections holding more than their share get no new calls.
    public var memoryBudgetBytes = 256 * 1024 * 1024
    /// Seconds a connection may leave replies unread (no byte written to it) before it is dropped; 0 = never.
    public var writeStallTimeoutSeconds = 30
    /// Seconds a connection may stay silent with no call in flight before it is closed; 0 = never.
    public var idleTimeoutSeconds = 300
    /// Seconds an HTTP/2 connection with a call in flight (a Watch, a reflection stream) may stay
    /// silent before the server sends it a keepalive PING; 0 = never. gRPC servers' default.
    public var keepaliveTimeSeconds = 7200
    /// Seconds the client has to answer (send anything) after a keepalive PING before its
    /// connection is closed.
    public var keepaliveTimeoutSeconds = 20
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
    /// Allow listening on a non-loopback address without TLS and a token.
    public var insecure = false
    /// TLS certificate chain and private key (PEM); both set turn TLS on.
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?
    /// CA whose certificates clients may (or must, see `tlsClientAuthentication`) present.
    public var tlsClientCAFile: String?
    /// With `tlsClientCAFile`: whether a client certificate is required or optional.
    public var tlsClientAuthentication = TLSClientAuthentication.optional
    /// Refuse cleartext connections (TLS only on the port).
    public var tlsOnly = false
    /// Seconds a client may take to complete the TLS handshake it started.
    public var tlsHandshakeTimeoutSeconds = 10
    /// TLS handshakes in progress at once; further TLS connections wait (not read) for a slot.
    public var tlsMaxHandshakes = 1024
    /// With every handshake slot taken, a new TLS connection takes the slot of the handshake that
    /// has held one longest once that has run this many seconds (closing it); 0: never, it waits.
    public var tlsEvictHandshakesAfterSeconds = 1
    /// Where to serve Prometheus metrics over HTTP (`GET /metrics`); nil = nowhere.
    public var metricsListen: SocketAddress?

    public init() {}

    /// True when TLS is configured (certificate and key).
    public var tlsEnabled: Bool { tlsCertificateFile != nil && tlsKeyFile != nil }

    /// Why a cleartext connection may call only the methods that need no token (health), nil
    /// when it may call any: TLS with a required client certificate (a cleartext client would
    /// skip the check), for every peer; or TLS on a non-loopback address unless `--insecure`
    /// (a remote client that forgot TLS would be served with its token and data in clear
    /// text), for peers not on loopback (`remoteOnly`). Health stays open to cleartext for
    /// load balancers' checks. `--tls-only` refuses cleartext connections outright.
    public var cleartextLimit: (reason: String, remoteOnly: Bool)? {
        guard tlsEnabled, !tlsOnly else { return nil }
        if tlsClientAuthentication == .require && tlsClientCAFile != nil { return ("--tls-client-auth require", false) }
        if !listen.isLoopback && !insecure { return ("TLS on a non-loopback address", true) }
        return nil
    }

    /// What the server's configuration leaves open on a non-loopback address because of
    /// `--insecure` (for a warning at start), nil when nothing.
    public var insecureExposure: String? {
        guard insecure else { return nil }
        var open: [String] = []
        if !listen.isLoopback {
            if authTokenFile == nil { open.append("calls without a token on \(listen)") }
            if tlsEnabled && !tlsOnly { open.append("calls over cleartext on \(listen)") }
        }
        if let metricsListen, !metricsListen.isLoopback { open.append("metrics without auth on \(metricsListen)") }
        return open.isEmpty ? nil : open.joined(separator: ", ")
    }

    /// Rejects combinations that are unsafe or incomplete: a non-loopback address without TLS
    /// and a token (unless `insecure` says the operator means it), half a TLS setup.
    public func validate() throws(RPCError) {
        guard Self.maxFrameBytesRange.contains(maxFrameBytes) else {
            throw RPCError.invalidArgument(
                "--max-frame-bytes must be \(Self.maxFrameBytesRange.lowerBound) to \(Self.maxFrameBytesRange.upperBound) "
                    + "(256 MiB), got \(maxFrameBytes): a larger frame's length prefix could begin with 0x16, "
                    + "the first byte of a TLS record")
        }
        if (tlsCertificateFile == nil) != (tlsKeyFile == nil) {
            throw RPCError.invalidArgument("--tls-cert and --tls-key go together: give both to turn TLS on")
        }
        if tlsClientAuthentication == .require && tlsClientCAFile == nil {
            throw RPCError.invalidArgument("--tls-client-auth require needs --tls-client-ca FILE: the CA the client "
                                           + "certificates must be signed by (without it, no client is asked for one)")
        }
        if !tlsEnabled && (tlsOnly || tlsClientCAFile != nil) {
            throw RPCError.invalidArgument("--tls-only and --tls-client-ca need TLS: give --tls-cert and --tls-key")
        }
        if !listen.isLoopback && !insecure && (authTokenFile == nil || !tlsEnabled) {
            let missing = [authTokenFile == nil ? "--auth-token-file" : nil, tlsEnabled ? nil : "TLS (--tls-cert, --tls-key)"]
                .compactMap { $0 }.joined(separator: " and ")
            let risk = tlsEnabled ? "anyone who reaches the port could call every method"
                : authTokenFile == nil ? "anyone who reaches the port could call every method, and the data would cross the network in clear text"
                : "remote clients would send the token and data in clear text"
            throw RPCError.failedPrecondition(
                "refusing to listen on non-loopback address \(listen) without \(missing): \(risk); "
                    + "pass --insecure to do it anyway")
        }
        if let metricsListen, !metricsListen.isLoopback && !insecure {
            throw RPCError.failedPrecondition(
                "refusing to serve metrics (no auth) on non-loopback address \(metricsListen); "
                    + "pass --insecure to do it anyway")
        }
        if keepaliveTimeSeconds < 0 || keepaliveTimeoutSeconds < 1 {
            throw RPCError.invalidArgument("--keepalive-time must be 0 or more and --keepalive-timeout 1 or more, got "
                                           + "\(keepaliveTimeSeconds) and \(keepaliveTimeoutSeconds)")
        }
        // Two sockets bound but not yet listening do not clash (SO_REUSEADDR), so this would
        // fail only at listen, after the database was opened (review 33 L1).
        let wildcards: Set<String> = ["0.0.0.0", "::"]
        if let metricsListen, metricsListen.port != 0, metricsListen.port == listen.port,
           metricsListen.host == listen.host || wildcards.contains(metricsListen.host) || wildcards.contains(listen.host) {
            throw RPCError.invalidArgument("--metrics-listen \(metricsListen) and --listen \(listen) take the same port: "
                                           + "give the metrics endpoint a port of its own")
        }
    }
}
