import LarderHTTP2
import LarderSystem
import LarderWire

/// The gRPC-over-HTTP/2 side of one connection: its nghttp2 session and the calls it has in
/// the core. Loop thread only (owned by its `Connection`).
///
/// A unary or server-streaming call starts in the `CallCore` when its stream half-closes with
/// exactly one request message (the session delivers such requests whole, see
/// `GRPCServerSession.deliversWholeRequest`); a bidirectional call starts as soon as its headers
/// arrive, and each message then goes to the core as it comes, until the half-close. Replies
/// come back through `answer` (answered on the loop) or `apply` (a record `HTTP2ReplyEncoder`
/// made on another thread).
final class HTTP2Link {
    let session: GRPCServerSession

    /// Streams whose call is in the core (so a reset cancels it there).
    private(set) var started = CallIDSet()
    /// Bidirectional calls in the core still taking client messages.
    private(set) var receiving = CallIDSet()
    /// Bytes the session holds (`heldOutputBytes` + `bufferedInputBytes`) counted in the
    /// connection's memory budget.
    private(set) var accountedSessionBytes = 0
    /// True after a call was cancelled, until the core's queued replies were delivered: the
    /// client already counts its stream closed, so its end must be delivered (freeing its slot
    /// in the core) before the next call starts.
    var cancelledSinceDelivery = false
    /// Since when responses have waited in the session for the peer's flow-control window with
    /// none going out (nil while none wait): the write-stall timeout, for HTTP/2's own window.
    private(set) var flowStalledSince: UInt64?
    /// `session.releasedOutputBytes` when `noteHeldOutput` last looked.
    private var releasedAtLastLook: UInt64 = 0
    /// Finds a request path's handler.
    private let resolve: (String) -> ResolvedMethod
    /// The methods of the paths this connection called (a few; the session hands the same
    /// String for a repeated path, so a hit is an identity compare, not a hash).
    private var resolved: [(path: String, method: ResolvedMethod)] = []
    /// The array the session's events come in, reused from read to read (`takeEventBuffer`).
    private var eventBuffer: [GRPCServerEvent] = []

    /// `refusesAtOnce` tells whether the core would refuse a call of a known method before its
    /// handler sees the request (no token, a wrong one: `CallCore.authenticationError`).
    init(configuration: GRPCServerConfiguration, resolve: @escaping (String) -> ResolvedMethod,
         refusesAtOnce: @escaping (GRPCRequestHead, MethodHandler) -> Bool = { _, _ in false }) throws(GRPCSessionError) {
        session = try GRPCServerSession(configuration: configuration)
        self.resolve = resolve
        // Every method but a bidirectional one takes exactly one request message. An unknown
        // path starts at its headers, so the core answers it at once (UNIMPLEMENTED, or
        // UNAUTHENTICATED first, as over the lean protocol), whatever the client means to send;
        // so does a call the core will refuse unread: a client without the token learns the same
        // of a served method as of an unknown one (not whether it takes one message).
        session.deliversWholeRequest = { [unowned self] head in
            guard let handler = method(for: head.path).handler else { return false }
            if case .bidirectional = handler.execution { return false }
            return !refusesAtOnce(head, handler)
        }
    }

    /// What the core must do for one event; the session's own bookkeeping is done here.
    enum Action {
        /// Start a call (a bidirectional one with no message: its messages follow as `receive`).
        case start(GRPCRequestHead, ResolvedMethod, [UInt8])
        case receive(UInt64, [UInt8])
        case halfClose(UInt64)
        case cancel(UInt64)
        /// Count a call the session answered itself (`path` nil: it named none).
        case refused(UInt64, path: String?, RPCError)
    }

    /// What `event` means for the core.
    func handle(_ event: GRPCServerEvent) -> Action? {
        switch event {
        case .request(let head, let message):
            started.insert(UInt64(head.streamID))
            return .start(head, method(for: head.path), message)
        case .requestStarted(let head):
            // A bidirectional call (the others come whole): its messages follow.
            started.insert(UInt64(head.streamID))
            receiving.insert(UInt64(head.streamID))
            return .start(head, method(for: head.path), [])
        case .message(let streamID, let bytes):
            let id = UInt64(streamID)
            return receiving.contains(id) ? .receive(id, bytes) : nil
        case .endOfInput(let streamID):
            let id = UInt64(streamID)
            return receiving.remove(id) ? .halfClose(id) : nil
        case .cancelled(let streamID, _):
            let id = UInt64(streamID)
            receiving.remove(id)
            guard started.remove(id) else { return nil }
            cancelledSinceDelivery = true
            return .cancel(id)
        case .refused(let streamID, let path, let reason):
            return .refused(UInt64(streamID), path: path, reason)
        }
    }

    /// The handler of `path`, from the paths seen before when it is one.
    private func method(for path: String) -> ResolvedMethod {
        for entry in resolved where entry.path == path { return entry.method }
        let method = resolve(path)
        // Known methods only: a peer sending made-up paths must not grow this.
        if case .known = method, resolved.count < 32 { resolved.append((path, method)) }
        return method
    }

    /// Ends call `callID` with `result`, answered on the loop; returns the response message's
    /// bytes (prefix included), or the error message's. The session sends it when the
    /// connection's output is next pumped.
    @discardableResult
    func answer(callID: UInt64, result: Result<[UInt8], RPCError>) -> Int {
        let streamID = Int32(truncatingIfNeeded: callID)
        forget(streamID)
        switch result {
        case .success(let payload):
            session.sendMessage(streamID: streamID, payload)
            session.sendTrailers(streamID: streamID, status: .ok)
            return GRPCMessageFraming.prefixSize + payload.count
        case .failure(let error):
            session.sendTrailers(streamID: streamID, status: error.code, message: error.message)
            return error.message.utf8.count
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
        switch kind {
        case .reply:
            forget(streamID)
            session.sendFramedMessage(streamID: streamID, record, from: 1)
            session.sendTrailers(streamID: streamID, status: .ok)
        case .streamMessage:
            guard session.sendFramedMessage(streamID: streamID, record, from: 1) else { return nil }
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
            guard record.count >= 5 else { return nil }
            let raw = UInt32(record[1]) << 24 | UInt32(record[2]) << 16 | UInt32(record[3]) << 8 | UInt32(record[4])
            answer(callID: callID, result: .failure(RPCError(StatusCode(rawValue: Int32(bitPattern: raw)),
                                                             String(decoding: record.dropFirst(5), as: UTF8.self))))
        }
        return nil
    }

    /// An empty array for the session's events, with the capacity of the last one; give it
    /// back with `returnEventBuffer` (a nested use just gets a fresh array).
    func takeEventBuffer() -> [GRPCServerEvent] {
        var buffer: [GRPCServerEvent] = []
        swap(&buffer, &eventBuffer)
        return buffer
    }

    func returnEventBuffer(_ buffer: inout [GRPCServerEvent]) {
        buffer.removeAll(keepingCapacity: buffer.capacity <= 1024)
        swap(&buffer, &eventBuffer)
    }

    /// The session drains and its client has not yet answered the drain's PING (see
    /// `GRPCServerSession.awaitsDrainAcknowledgement`).
    var awaitsDrainAcknowledgement: Bool { session.awaitsDrainAcknowledgement }

    /// Sends the drain's final GOAWAY without waiting any longer for the client's PING answer.
    func finishDrain() { session.finishDrain() }

    /// Sends a keepalive PING (`GRPCServerSession.sendKeepalivePing`).
    func sendKeepalivePing() { session.sendKeepalivePing() }

    /// Response bytes the session holds for a closed flow-control window.
    var heldOutputBytes: Int { session.heldOutputBytes }

    /// Brings `usage` up to date with what the session holds: responses waiting for the
    /// client's window and requests not yet complete (partial messages, and whole requests
    /// waiting for their half-close) as the connection's own bytes; the open streams of calls
    /// in flight (their heads) as its open calls.
    func account(to usage: ConnectionUsage) {
        let held = session.heldOutputBytes + session.bufferedInputBytes
        usage.add(held - accountedSessionBytes)
        accountedSessionBytes = held
        let open = session.openCallBytes
        usage.addOpenCalls(open - accountedOpenCallBytes)
        accountedOpenCallBytes = open
    }

    /// What the open streams of calls in flight held when last accounted.
    private var accountedOpenCallBytes = 0

    /// After the session's output was taken: starts, keeps or clears `flowStalledSince`.
    func noteHeldOutput() {
        let released = session.releasedOutputBytes
        defer { releasedAtLastLook = released }
        if session.heldOutputBytes == 0 {
            flowStalledSince = nil
        } else if flowStalledSince == nil || released != releasedAtLastLook {
            flowStalledSince = MonotonicClock.nanoseconds()
        }
    }

    private func forget(_ streamID: Int32) {
        let id = UInt64(streamID)
        started.remove(id)
        receiving.remove(id)
    }
}
