import LarderWire

/// What a received byte stream meant, in order, for the call core.
public enum GRPCServerEvent: Hashable, Sendable {
    /// A call began: its parsed, checked request head. Requests the session answered itself
    /// (wrong content-type, bad metadata, too many headers) never get here.
    case requestStarted(GRPCRequestHead)
    /// One whole request message (uncompressed).
    case message(streamID: Int32, [UInt8])
    /// The client half-closed: no more messages on this stream.
    case endOfInput(streamID: Int32)
    /// The call is over before the core finished it: the client reset the stream, or the session
    /// answered it with `reason` (oversize or compressed message). Stop working on it; anything
    /// sent on the stream from now on is dropped.
    case cancelled(streamID: Int32, reason: RPCError)
}
