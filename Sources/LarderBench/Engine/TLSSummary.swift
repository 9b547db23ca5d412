/// What the TLS handshakes of a run's load connections negotiated.
public struct TLSSummary: Sendable, Equatable {
    /// "TLSv1.3", "TLSv1.2".
    public var version: String
    /// The ALPN protocol the server chose ("larder", "h2"); nil when none.
    public var alpn: String?
    /// Handshakes done for the load, and how many of them resumed an earlier session.
    public var handshakes: Int
    public var resumed: Int
}
