public import LarderWire

/// Why a connection ended: the session has queued a GOAWAY with `code` (flush it with
/// `writeOutput(into:)`, then close the socket).
public struct GRPCSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The HTTP/2 error code the GOAWAY carries.
    public var code: HTTP2ErrorCode
    /// What went wrong, for logs and for the GOAWAY's debug data.
    public var message: String

    public init(_ code: HTTP2ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The status the calls on the connection end with.
    public var rpcError: RPCError { RPCError(code == .enhanceYourCalm ? .resourceExhausted : .unavailable, message) }

    public var description: String { "HTTP/2 \(code): \(message)" }
}
