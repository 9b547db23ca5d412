public import LarderWire

/// What a received byte stream meant, in order, for the call core.
///
/// A batch reports input already processed: a stream that a later event of the same batch
/// cancels is gone by the time the batch is returned, so answering its earlier events does
/// nothing (the send methods return false).
public enum GRPCServerEvent: Hashable, Sendable {
    /// A call began: its parsed, checked request head. Requests the session answered itself
    /// (wrong content-type, bad metadata, too many headers) never get here.
    case requestStarted(GRPCRequestHead)
    /// A call whose request came whole (for a path `GRPCServerSession.deliversWholeRequest`
    /// says yes to): its head and its one message, once the client half-closed. Open from here
    /// as a call is after `requestStarted`, its message and `endOfInput`.
    case request(GRPCRequestHead, message: [UInt8])
    /// One whole request message (inflated, when it came compressed).
    case message(streamID: Int32, [UInt8])
    /// The client half-closed: no more messages on this stream.
    case endOfInput(streamID: Int32)
    /// The call is over before the core finished it: the client reset the stream, or the session
    /// answered it with `reason` (an oversize message, or a compressed one it could not inflate). Stop working on it; anything
    /// sent on the stream from now on is dropped.
    case cancelled(streamID: Int32, reason: RPCError)
    /// A request the session answered itself before the core had it (a method other than POST,
    /// a wrong content-type, a malformed `grpc-timeout` or `-bin` value, too many header bytes,
    /// no message or two for a one-message method, an oversize message or one it could not inflate): already
    /// answered with `reason`; reported for the metrics and the access log. `path` is the
    /// request's `:path` when it had one.
    case refused(streamID: Int32, path: String?, reason: RPCError)
}
