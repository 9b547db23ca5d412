import LarderReactor
import LarderWire

/// What the metrics and the access log need of a call whose end is queued.
struct FinishedCall: Sendable {
    let callID: UInt64
    let methodIndex: Int
    let code: StatusCode
    /// The status message sent with `code` (empty for OK).
    let message: String
    let receivedAt: UInt64
    let peer: SocketAddress
    /// Sizes on the wire of the request and of the reply, framing included.
    let requestBytes: Int
    let replyBytes: Int
    /// The client's TLS certificate subject, for the access log.
    let clientCertificate: String?

    init(_ context: CallContext, methodIndex: Int, code: StatusCode, message: String, replyBytes: Int) {
        self.init(callID: context.callID, methodIndex: methodIndex, code: code, message: message,
                  receivedAt: context.receivedAt, peer: context.peer, requestBytes: context.requestBytes,
                  replyBytes: replyBytes, clientCertificate: context.clientCertificate)
    }

    /// A unary call of `context` that ended with `result`, or with `refusal` where its transport
    /// sent that instead (`ReplyEncoder.reply`, `CallConnection.appendReply`).
    init(_ context: CallContext, methodIndex: Int, result: Result<[UInt8], RPCError>, refusal: RPCError?,
         replyBytes: Int) {
        self.init(context, methodIndex: methodIndex, code: refusal?.code ?? result.statusCode,
                  message: refusal?.message ?? result.statusMessage, replyBytes: replyBytes)
    }

    /// A call in flight on `connection` that ends now with `code` and `message`.
    init(_ call: InFlightCall, callID: UInt64, on connection: some CallConnection, code: StatusCode, message: String,
         replyBytes: Int) {
        self.init(callID: callID, methodIndex: call.methodIndex, code: code, message: message,
                  receivedAt: call.receivedAt, peer: connection.peer, requestBytes: call.requestBytes,
                  replyBytes: replyBytes, clientCertificate: connection.clientCertificate)
    }

    init(callID: UInt64, methodIndex: Int, code: StatusCode, message: String, receivedAt: UInt64,
                 peer: SocketAddress, requestBytes: Int, replyBytes: Int, clientCertificate: String?) {
        self.callID = callID
        self.methodIndex = methodIndex
        self.code = code
        self.message = message
        self.receivedAt = receivedAt
        self.peer = peer
        self.requestBytes = requestBytes
        self.replyBytes = replyBytes
        self.clientCertificate = clientCertificate
    }
}
