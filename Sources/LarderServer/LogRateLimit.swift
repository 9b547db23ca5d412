/// Which log events are rate-limited, and how: at most `lines` lines of each per
/// `intervalSeconds`; the rest are counted, and one `event=log_suppressed` line gives the count
/// when the interval is over.
///
/// For the events a peer can cause at will, one line per refused call or dropped connection:
/// without a bound, 69,800 unauthenticated calls with 4 KB method names wrote 289 MB of log in 3 s.
public struct LogRateLimit: Sendable {
    public var events: Set<String>
    public var lines: Int
    public var intervalSeconds: Int

    public init(events: Set<String>, lines: Int, intervalSeconds: Int) {
        self.events = events
        self.lines = lines
        self.intervalSeconds = intervalSeconds
    }

    /// What `larder-server` does (docs/OPERATIONS.md, "Logs"): 10 lines per 5 s of each event a
    /// peer triggers by what it sends or fails to send, and of `database_failed`, which every
    /// call that reaches a failing database logs. Not `call_failed` (a server fault,
    /// whose line holds the `ref` a client was given), nor `accept_failed` and
    /// `memory_budget_exhausted` (bounded by their own interval), nor debug lines.
    public static let peerTriggered = LogRateLimit(events: [
        "unauthenticated", "envelope_rejected", "frame_rejected", "frame_timeout", "write_stall",
        "connection_refused", "connection_evicted", "http2_connection_failed", "stream_reset", "http2_streams_reset",
        "http2_reads_held", "call_parked", "cleartext_refused",
        "tls_handshake_failed", "tls_failed", "tls_handshake_timeout", "tls_handshakes_full",
        "tls_handshake_evicted", "memory_budget_shed", "keepalive_timeout",
        "database_failed",
    ], lines: 10, intervalSeconds: 5)

    /// Nothing limited.
    public static let none = LogRateLimit(events: [], lines: 0, intervalSeconds: 0)
}
