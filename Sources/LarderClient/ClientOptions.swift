public import LarderWire

/// Settings of a `LarderClient` connection.
public struct ClientOptions: Sendable {
    /// How long `LarderClient.init` waits for the TCP connection.
    public var connectTimeout: Duration
    /// The timeout of calls that do not pass their own; nil = none.
    public var defaultTimeout: Duration?
    /// Metadata sent with every call, e.g. `authorization: Bearer <token>`.
    /// Keys are lower-cased; a call's own metadata wins over these.
    public var metadata: [String: String]
    /// The largest reply frame accepted (and request frame sent).
    public var maxFrameBytes: Int
    /// The waits between reconnect attempts after the connection ended.
    public var reconnectBackoff: ReconnectBackoff
    /// TLS (verified against `tls.caFile` or the system trust store); nil = cleartext.
    public var tls: ClientTLS?

    public init(connectTimeout: Duration = .seconds(5), defaultTimeout: Duration? = nil,
                metadata: [String: String] = [:], maxFrameBytes: Int = Frame.defaultMaxSize,
                reconnectBackoff: ReconnectBackoff = .init(), tls: ClientTLS? = nil) {
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.defaultTimeout = defaultTimeout
        self.metadata = metadata
        self.maxFrameBytes = maxFrameBytes
        self.reconnectBackoff = reconnectBackoff
    }

    /// Adds the `authorization: Bearer <token>` metadata entry.
    public mutating func setBearerToken(_ token: String) {
        metadata["authorization"] = "Bearer \(token)"
    }
}
