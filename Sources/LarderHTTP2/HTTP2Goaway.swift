/// A GOAWAY frame a client session received: the last stream the server will process, and why.
public struct HTTP2Goaway: Sendable, Equatable {
    public var lastStreamID: Int32
    public var code: HTTP2ErrorCode
    /// The frame's debug data as text (at most 256 bytes of it), where a server says why
    /// (Larder's `--tls-only`: "this server accepts TLS connections only …"); empty if none.
    public var debugText: String

    public init(lastStreamID: Int32, code: HTTP2ErrorCode, debugText: String = "") {
        self.lastStreamID = lastStreamID
        self.code = code
        self.debugText = debugText
    }

    /// `GOAWAY CODE`, then the debug text in parentheses if any, for a message.
    public var summary: String { "GOAWAY \(code)" + (debugText.isEmpty ? "" : " (\(debugText))") }
}
