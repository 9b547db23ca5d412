public import LarderReactor
import LarderSystem
public import LarderWire

/// What a handler knows about the call it serves.
public struct CallContext: Sendable {
    public let connectionID: UInt64
    public let callID: UInt64
    public let method: String
    public let metadata: CallMetadata
    /// Monotonic nanoseconds after which the call is DEADLINE_EXCEEDED; nil = none.
    public let deadline: UInt64?
    /// Monotonic nanoseconds when the server read the call.
    public let receivedAt: UInt64
    /// The client's address.
    public let peer: SocketAddress
    /// Size of the request frame on the wire, its length prefix included.
    public let requestBytes: Int
    /// The connection's bytes in the server's memory budget; nil outside a server.
    let usage: ConnectionUsage?
    /// The subject of the client's verified TLS certificate; nil without TLS or without one.
    public var clientCertificate: String? = nil
    /// The `CallCore`'s number for this call, unique in the process (0 outside a core): tells a
    /// late reply from the reply of a newer call that reuses its call id.
    var serial: UInt64 = 0

    /// Throws DEADLINE_EXCEEDED when the deadline has passed.
    public func checkDeadline() throws(RPCError) {
        if let deadline, MonotonicClock.nanoseconds() >= deadline {
            throw RPCError(.deadlineExceeded, "deadline of \(method) exceeded")
        }
    }

    /// Throws `mustWaitSignal` when the call must wait before it runs: its connection holds
    /// more than it may in unread replies and undecoded requests (`ConnectionUsage.mustWait`).
    /// The handler's job then ends without doing anything, and `parkOrRespond` keeps the call
    /// to be submitted again once the client has read. What the calls in flight hold, this
    /// one's included, was judged at admission.
    func waitForRoom() throws(RPCError) {
        if let usage, usage.mustWait { throw Self.mustWaitSignal }
    }

    /// What `waitForRoom` throws: never sent to a client.
    static let mustWaitSignal = RPCError(.resourceExhausted, "(internal: the call waits for its connection to have room)")

    /// Hands `result` to `respond`, unless it is `mustWaitSignal`: then keeps `resubmit` until
    /// the connection has room.
    func parkOrRespond(_ result: Result<[UInt8], RPCError>, resubmit: @escaping @Sendable () -> Void,
                       _ respond: MethodHandler.Respond) {
        if case .failure(let error) = result, error.code == .resourceExhausted, error == Self.mustWaitSignal,
           let usage {
            usage.park(resubmit)
        } else {
            respond(result)
        }
    }
}
