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
    /// True when the core counts what the call holds in the budget while the store has it
    /// (lean calls, `CallCore.heldBytes(of:)`); HTTP/2 counts its streams itself.
    var heldByCore = false

    /// Throws DEADLINE_EXCEEDED when the deadline has passed.
    public func checkDeadline() throws(RPCError) {
        if let deadline, MonotonicClock.nanoseconds() >= deadline {
            throw RPCError(.deadlineExceeded, "deadline of \(method) exceeded")
        }
    }

    /// True when the call must wait before it runs: its connection holds more than it may in
    /// unread replies and undecoded requests (`ConnectionUsage.mustWait`). The handler's job
    /// then parks (`park`) and ends with `mustWaitSignal`, doing nothing; the core sends
    /// nothing for that end. What the calls in flight hold, this one's included, was judged
    /// at admission.
    var mustWait: Bool { usage?.mustWait ?? false }

    /// Keeps the call until the connection has room, then `resubmit`s it, or `abandon`s it if
    /// the connection closes first; false when it cannot (the connection closed): the call
    /// then ends without running (`orphaned`).
    func park(resubmit: @escaping @Sendable () -> Void, abandon: @escaping @Sendable () -> Void) -> Bool {
        usage?.park(ParkedCall(resubmit: resubmit, abandon: abandon, bytes: requestBytes + 1024,
                               countedAsHeld: heldByCore)) ?? false
    }

    /// What a parked call whose connection closed ends with (nobody receives it).
    static let abandoned = RPCError(.cancelled, "the connection closed while the call waited for it to read its replies")

    /// True once the call's connection has closed: nobody will receive its reply.
    var connectionClosed: Bool { usage?.isClosed ?? false }

    /// What a read whose connection closed before the store started it ends with, not run:
    /// nobody would receive its reply, and a peer that pipelines reads and disconnects, again
    /// and again, would otherwise leave the readers work without bound (audit 25 H1).
    static let orphaned = RPCError(.cancelled, "the connection closed before the read ran, so it was not run")

    /// What a job that parked ends with: never sent to a client.
    static let mustWaitSignal = RPCError(.resourceExhausted, "(internal: the call waits for its connection to have room)")
}
