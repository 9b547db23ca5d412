import LarderReactor
import LarderWire

/// What a handler knows about the call it serves.
public struct CallContext: Sendable {
    public let connectionID: UInt64
    public let callID: UInt64
    public let method: String
    public let metadata: [String: String]
    /// Monotonic nanoseconds after which the call is DEADLINE_EXCEEDED; nil = none.
    public let deadline: UInt64?
    /// Monotonic nanoseconds when the server read the call.
    public let receivedAt: UInt64
    /// The client's address.
    public let peer: SocketAddress
    /// Size of the request frame on the wire, its length prefix included.
    public let requestBytes: Int

    /// Throws DEADLINE_EXCEEDED when the deadline has passed.
    public func checkDeadline() throws(RPCError) {
        if let deadline, MonotonicClock.nanoseconds() >= deadline {
            throw RPCError(.deadlineExceeded, "deadline of \(method) exceeded")
        }
    }
}
