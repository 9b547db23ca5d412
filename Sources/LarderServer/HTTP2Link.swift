import LarderHTTP2
import LarderSystem
import LarderWire

/// The gRPC-over-HTTP/2 side of one connection: its nghttp2 session and the calls whose
/// request is still arriving. Loop thread only (owned by its `Connection`).
///
/// A unary or server-streaming call starts in the `CallCore` when its stream half-closes with
/// exactly one request message; a bidirectional call starts as soon as its headers arrive, and
/// each message then goes to the core as it comes, until the half-close. Replies come back
/// through `answer` (answered on the loop) or `apply` (a record `HTTP2ReplyEncoder` made on
/// another thread).
final class HTTP2Link {
    let session: GRPCServerSession

    /// A request whose message or end has not arrived yet.
    struct Pending {
        var head: GRPCRequestHead
        var method: ResolvedMethod
        var message: [UInt8]?
        var messages = 0
    }

    private(set) var pending: [Int32: Pending] = [:]
    /// Streams whose call is in the core (so a reset cancels it there).
    private(set) var started: Set<Int32> = []
    /// Bidirectional calls in the core still taking client messages.
    private(set) var receiving: Set<Int32> = []
    /// Bytes of `session.heldOutputBytes` counted in the connection's memory budget.
    private(set) var accountedHeldBytes = 0
    /// True after a call was cancelled, until the core's queued replies were delivered: the
    /// client already counts its stream closed, so its end must be delivered (freeing its slot
    /// in the core) before the next call starts.
    var cancelledSinceDelivery = false

    init(configuration: GRPCServerConfiguration) throws(GRPCSessionError) {
        session = try GRPCServerSession(configuration: configuration)
    }

    /// What the core must do for one event; the session's own bookkeeping is done here.
    enum Action {
        /// Start a call (a bidirectional one with no message: its messages follow as `receive`).
        case start(GRPCRequestHead, ResolvedMethod, [UInt8])
        case receive(UInt64, [UInt8])
        case halfClose(UInt64)
        case cancel(UInt64)
    }

    /// What `event` means for the core; `resolve` finds a request path's handler.
    func handle(_ event: GRPCServerEvent, resolve: (String) -> ResolvedMethod) -> Action? {
        switch event {
        case .requestStarted(let head):
            let method = resolve(head.path)
            if case .bidirectional? = method.handler?.execution {
                started.insert(head.streamID)
                receiving.insert(head.streamID)
                return .start(head, method, [])
            }
            pending[head.streamID] = Pending(head: head, method: method)
            return nil
        case .message(let streamID, let bytes):
            if receiving.contains(streamID) { return .receive(UInt64(streamID), bytes) }
            guard var call = pending[streamID] else { return nil }
            call.messages += 1
            call.message = bytes
            pending[streamID] = call
            if call.messages > 1 {
                pending[streamID] = nil
                let kind = if case .serverStreaming? = call.method.handler?.execution { "takes one request" } else { "is unary" }
                session.sendTrailers(streamID: streamID, status: .internal,
                                     message: "\(call.head.path) \(kind): send exactly one request message")
            }
            return nil
        case .endOfInput(let streamID):
            if receiving.remove(streamID) != nil { return .halfClose(UInt64(streamID)) }
            guard let call = pending.removeValue(forKey: streamID) else { return nil }
            guard let message = call.message else {
                session.sendTrailers(streamID: streamID, status: .internal,
                                     message: "the request ended without a message: \(call.head.path) takes one")
                return nil
            }
            started.insert(streamID)
            return .start(call.head, call.method, message)
        case .cancelled(let streamID, _):
            pending[streamID] = nil
            receiving.remove(streamID)
            guard started.remove(streamID) != nil else { return nil }
            cancelledSinceDelivery = true
            return .cancel(UInt64(streamID))
        }
    }

    /// Ends call `callID` with `result`, answered on the loop.
    func answer(callID: UInt64, result: Result<[UInt8], RPCError>) {
        let streamID = Int32(truncatingIfNeeded: callID)
        forget(streamID)
        switch result {
        case .success(let payload):
            session.sendMessage(streamID: streamID, payload)
            session.sendTrailers(streamID: streamID, status: .ok)
        case .failure(let error):
            session.sendTrailers(streamID: streamID, status: error.code, message: error.message)
        }
    }

    /// Applies a record `HTTP2ReplyEncoder` made for call `callID`. A stream message that leaves
    /// more than `outputLimit` response bytes waiting in the session (the peer does not read, or
    /// not as fast as the handler sends) resets its stream with ENHANCE_YOUR_CALM (gRPC clients
    /// report RESOURCE_EXHAUSTED) and returns the error to end its call with in the core.
    func apply(_ record: [UInt8], callID: UInt64, isFinal: Bool, outputLimit: Int) -> RPCError? {
        let streamID = Int32(truncatingIfNeeded: callID)
        if isFinal { forget(streamID) }
        guard let first = record.first, let kind = HTTP2ReplyEncoder.Kind(rawValue: first) else { return nil }
        let body = Array(record.dropFirst())
        switch kind {
        case .reply:
            answer(callID: callID, result: .success(body))
        case .streamMessage:
            guard session.sendMessage(streamID: streamID, body) else { return nil }
            let held = session.heldOutputBytes
            if held > outputLimit {
                session.reset(streamID: streamID, code: .enhanceYourCalm)
                forget(streamID)
                return RPCError(.resourceExhausted, "the client does not read this stream's responses: \(held) bytes "
                    + "wait unsent on the connection (limit \(outputLimit), --max-output-bytes)")
            }
        case .end:
            session.sendTrailers(streamID: streamID, status: .ok)
        case .error:
            guard body.count >= 4 else { return nil }
            let raw = UInt32(body[0]) << 24 | UInt32(body[1]) << 16 | UInt32(body[2]) << 8 | UInt32(body[3])
            answer(callID: callID, result: .failure(RPCError(StatusCode(rawValue: Int32(bitPattern: raw)),
                                                             String(decoding: body.dropFirst(4), as: UTF8.self))))
        }
        return nil
    }

    /// Response bytes the session holds for a closed flow-control window.
    var heldOutputBytes: Int { session.heldOutputBytes }

    /// The change in the session's held output since it was last accounted (add it to the
    /// connection's budget).
    func takeHeldBytesDelta() -> Int {
        let held = session.heldOutputBytes
        defer { accountedHeldBytes = held }
        return held - accountedHeldBytes
    }

    private func forget(_ streamID: Int32) {
        started.remove(streamID)
        receiving.remove(streamID)
    }

    /// The metadata as the core reads it: text values by name (the last of a repeated name).
    static func coreMetadata(_ metadata: GRPCMetadata) -> [String: String] {
        var result: [String: String] = [:]
        for entry in metadata.entries {
            if case .text(let value) = entry.value { result[entry.name] = value }
        }
        return result
    }
}
