/// A call of a connection in flight, as its `CallBook` keeps it.
struct InFlightCall {
    /// `CallContext.serial`.
    let serial: UInt64
    /// Monotonic nanoseconds of a unary call's deadline; 0 for none, and for streaming calls
    /// (their streams end at the deadline: `CallCore.expireStreams`).
    let deadline: UInt64
    let methodIndex: Int
    let receivedAt: UInt64
    let requestBytes: Int
}
