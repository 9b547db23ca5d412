import LarderWire

/// The calls of one connection in flight, as the `CallCore` keeps them. Loop thread only.
final class CallBook {
    /// Calls started on the store threads (or streaming) whose end has not been delivered.
    var inFlight = 0
    /// Those calls by id (a second call with one of them is refused), with what answering one
    /// at its deadline takes (`CallCore.expireCalls`).
    var ids = CallIDMap<InFlightCall>()
    /// Bidirectional calls still taking client messages, by call id.
    var receivers: [UInt64: any ClientStreamReceiver] = [:]
    /// The response streams of streaming calls not yet ended, by call id (cancelled when the connection goes).
    var streams: [UInt64: ServerStream] = [:]
    /// The `CallCore` delivery batch that last touched this connection.
    var deliveryBatch: UInt64 = 0
}
