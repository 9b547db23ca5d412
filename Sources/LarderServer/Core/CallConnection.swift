import LarderReactor
import LarderWire

/// One connection of some transport, as the `CallCore` sees it: where the
/// results of the calls it brought go. Loop thread only.
///
/// The core answers calls it refuses, and inline calls, with `appendReply` at once.
/// Replies made on other threads are encoded there by `replyEncoder` and handed to
/// `deliver` on the loop in batches; `repliesDelivered` follows each batch, once
/// per connection, so a transport writes each connection once per batch.
protocol CallConnection: AnyObject {
    /// Unique among all transports' connections (from `CallCore.makeConnectionID()`).
    var id: UInt64 { get }
    var peer: SocketAddress { get }
    /// The connection's bytes in the server's memory budget.
    var usage: ConnectionUsage { get }
    /// The calls of this connection in flight, kept by the core.
    var calls: CallBook { get }
    /// Encodes replies on the thread that produced them (a store thread): `deliver` gets its bytes.
    var replyEncoder: any ReplyEncoder { get }
    /// False for a transport that carries only unary calls: streaming methods get UNIMPLEMENTED.
    var supportsStreaming: Bool { get }
    /// True when the transport counts what its calls in flight hold in the memory budget itself
    /// (HTTP/2: each stream's head until it ends); else the core counts each call waiting for the
    /// store (`ConnectionUsage.addHeldCalls`).
    var accountsCallMemory: Bool { get }
    /// Reply bytes made for the peer and not yet taken by it: output not written to the socket,
    /// and over HTTP/2 responses waiting for its flow-control window. Over
    /// `--max-output-bytes`, new calls are refused.
    var unsentReplyBytes: Int { get }

    /// True once the transport closed the connection (the core unregistered it): no call
    /// starts on it any more.
    var isClosed: Bool { get }
    /// The subject of the client's verified TLS certificate; nil without one.
    var clientCertificate: String? { get }
    /// True when the connection is TLS.
    var isEncrypted: Bool { get }
    /// True when calls that reach the core while the server drains are still served, because
    /// the client sent them before it could know of the drain (HTTP/2, see `Connection`).
    var takesCallsWhileDraining: Bool { get }

    /// Encodes the end of call `callID` into the output now; returns the bytes it added, and
    /// the refusal they carry instead of `result` if any (as `ReplyEncoder.reply`).
    func appendReply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: Int, refusal: RPCError?)
    /// Takes bytes `replyEncoder` made for call `callID` (`isFinal`: the call is over).
    func deliver(_ bytes: [UInt8], callID: UInt64, isFinal: Bool)
    /// After a batch of `deliver`s: write the output, resume reading.
    func repliesDelivered()
    /// Writes what `appendReply` added outside the handling of this connection's input (the
    /// server's tick answering calls at their deadline); also called when such a call ends in
    /// the store, so that a half-closed connection left with nothing in flight closes.
    func flushAnswers()
}

extension CallConnection {
    var clientCertificate: String? { nil }
    var isEncrypted: Bool { false }
    var takesCallsWhileDraining: Bool { false }
}
