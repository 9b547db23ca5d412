import LarderReactor

/// Bytes a store thread (or a stream) produced for a connection, waiting for the loop.
struct PendingReply {
    let connectionID: UInt64
    let callID: UInt64
    /// `CallContext.serial` of the call.
    let serial: UInt64
    /// The connection's budget, holding `bytes` until the loop takes them.
    let usage: ConnectionUsage?
    let bytes: [UInt8]
    /// Set when these bytes end the call.
    let finished: FinishedCall?
    /// What the call held in the connection's budget while it waited for the store
    /// (`ConnectionUsage.addHeldCalls`), given back when the loop takes its end.
    let heldCallBytes: Int
}
