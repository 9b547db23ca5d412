import LarderWire

/// A call as a transport hands it to the `CallCore`: already unframed, in no
/// transport's terms.
///
/// `payload` is borrowed: the core decodes it before `start` returns, so it may
/// point into the transport's read buffer or unpack arena.
struct IncomingCall {
    /// The handler its method path named, or the path when it names none.
    var method: ResolvedMethod
    /// The call's id on its connection (the lean protocol's call_id, an HTTP/2 stream id); never 0.
    var callID: UInt64
    var metadata: CallMetadata
    /// Monotonic nanoseconds after which the call is DEADLINE_EXCEEDED; nil = none.
    var deadline: UInt64?
    /// Monotonic nanoseconds when the transport read the call.
    var receivedAt: UInt64
    /// Size of the request on the wire, framing included (for the access log).
    var requestBytes: Int
    /// The encoded request message (empty for a bidirectional call, whose messages come later).
    var payload: UnsafeRawBufferPointer
}

/// A method path from a request: its handler when it names one, else the path itself.
enum ResolvedMethod {
    case known(MethodHandler)
    case unknown(String)

    var path: String {
        switch self {
        case .known(let handler): handler.path
        case .unknown(let path): path
        }
    }

    var handler: MethodHandler? {
        if case .known(let handler) = self { return handler }
        return nil
    }
}
