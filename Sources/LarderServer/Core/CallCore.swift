import LarderAPI
import LarderReactor
import LarderSystem
import LarderStore
import LarderWire

/// The transport-agnostic half of the server: given a call any transport has
/// unframed, it admits it (drain, per-connection limits, memory budget), checks
/// the bearer token, finds and runs its handler, and sends the result back
/// through the call's `CallConnection`; it counts every call in the metrics and
/// writes the access log.
///
/// Everything but `queue`/`wakeForReplies` (and so `ServerStream`) runs on the
/// event loop thread, hence `@unchecked Sendable`. Replies made on the store
/// threads are encoded there by the connection's `ReplyEncoder` and queued;
/// the loop takes the whole queue with one wake-up (`deliverReplies`).
final class CallCore: @unchecked Sendable {
    let configuration: ServerConfiguration
    let logger: Logger
    let store: any Store
    let router: Router
    let metrics: MetricsRecorder
    /// The token calls must carry; replaced on the loop when SIGHUP reloads the file.
    var token: BearerToken?
    /// Why a cleartext connection may call only public methods (health); nil: it may call any
    /// (`ServerConfiguration.cleartextLimit`, worked out once).
    private let cleartextLimit: (reason: String, remoteOnly: Bool)?
    /// True once a drain began: new calls (but health checks and watches) get UNAVAILABLE.
    var isDraining = false
    /// Calls started and not yet ended, all connections together.
    private(set) var callsInFlight = 0
    /// Memory reused by every call the loop decodes or answers inline.
    let scratch = CallScratch()
    /// Called on the loop after each batch of replies was delivered (the server checks its drain).
    var afterDelivery: () -> Void = {}
    private let replies = LockedValue(ReplyQueue())
    private var connections: [UInt64: any CallConnection] = [:]
    private var lastConnectionID: UInt64 = 0
    /// Counts `deliverReplies` batches, to tell each connection once per batch.
    private var deliveryBatch: UInt64 = 0
    /// The last `CallContext.serial` handed out.
    private var lastSerial: UInt64 = 0
    /// Serials of calls answered at their deadline (`expireCalls`) whose own reply has not come
    /// back from the store yet: it is dropped when it does.
    private var expiredSerials = Set<UInt64>()
    /// Runs a closure on the loop thread (`EventLoop.execute`).
    private let onLoop: @Sendable (@escaping @Sendable () -> Void) -> Void

    init(configuration: ServerConfiguration, store: any Store, router: Router, metrics: MetricsRecorder,
         token: BearerToken?, logger: Logger, onLoop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.configuration = configuration
        self.store = store
        self.router = router
        self.metrics = metrics
        self.token = token
        self.cleartextLimit = configuration.cleartextLimit
        self.logger = logger
        self.onLoop = onLoop
    }

    // MARK: - Connections

    /// A connection id no transport has used yet.
    func makeConnectionID() -> UInt64 {
        lastConnectionID += 1
        return lastConnectionID
    }

    /// From now on, replies for `connection` reach it.
    func register(_ connection: any CallConnection) { connections[connection.id] = connection }

    /// `connection` is gone: its streaming calls are cancelled, replies still queued for it are dropped.
    func unregister(_ connection: any CallConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        // Parked calls end without running (a write, run now, would be applied with nobody
        // told); their ends, delivered to no one, free their slots and bytes.
        let parked = connection.usage.closeParking()
        if !parked.isEmpty {
            for call in parked { call.abandon() }
            wakeForReplies()
        }
        let calls = connection.calls
        for stream in calls.streams.values { stream.cancel() }
        let receivers = calls.receivers.values
        calls.receivers = [:]
        for receiver in receivers { receiver.cancelled() }
    }

    // MARK: - Starting calls

    /// The handler of the NUL-terminated method path `name`, or the path (validated as UTF-8).
    func resolveMethod(_ name: UnsafePointer<CChar>?) throws(RPCError) -> ResolvedMethod {
        if let name, let handler = router.handler(for: name) { return .known(handler) }
        return .unknown(try CFields.string(name, field: "method"))
    }

    /// The handler of method path `path`, or the path.
    func resolveMethod(_ path: String) -> ResolvedMethod {
        router.handler(for: path).map { .known($0) } ?? .unknown(path)
    }

    func context(for call: IncomingCall, on connection: some CallConnection) -> CallContext {
        lastSerial &+= 1
        return CallContext(connectionID: connection.id, callID: call.callID, method: call.method.path,
                           metadata: call.metadata, deadline: call.deadline, receivedAt: call.receivedAt,
                           peer: connection.peer, requestBytes: call.requestBytes, usage: connection.usage,
                           clientCertificate: connection.clientCertificate, serial: lastSerial,
                           heldByCore: !connection.accountsCallMemory)
    }

    /// Why a call is refused before its handler sees it: over cleartext where TLS would have
    /// checked something (`ServerConfiguration.cleartextLimit`), or without the token; nil when
    /// it may run. Public methods (health) need neither. `authorization` is asked only when a
    /// token is required, `loopbackPeer` only when the limit applies to remote peers alone (so
    /// neither on every call).
    func authenticationError(isPublic: Bool, authorization: @autoclosure () -> String?, encrypted: Bool,
                             loopbackPeer: @autoclosure () -> Bool) -> RPCError? {
        if isPublic { return nil }
        if let cleartextLimit, !encrypted, !(cleartextLimit.remoteOnly && loopbackPeer()) {
            return RPCError(.unauthenticated, "this server takes calls other than health checks over TLS only "
                            + "(\(cleartextLimit.reason)): connect with TLS (larder --tls)")
        }
        if let token, case let authorization = authorization(), !token.accepts(authorization) {
            return RPCError(.unauthenticated, authorization == nil
                ? "this server requires a bearer token: send metadata authorization: Bearer <token>"
                : "invalid bearer token")
        }
        return nil
    }

    /// Admits, authenticates and runs `call`; its result goes back through `connection`.
    func start<Connection: CallConnection>(_ call: IncomingCall, on connection: Connection) {
        // A transport still reading what a closed connection sent: nobody would end the call.
        guard !connection.isClosed else { return }
        let handler = call.method.handler
        metrics.started(method: handler?.metricsIndex ?? metrics.index(of: call.method.path))
        let context = context(for: call, on: connection)
        let calls = connection.calls
        if calls.ids.contains(call.callID) {
            refuse(RPCError.invalidArgument(
                "call_id \(call.callID) is already in flight on this connection; use an id unique among your calls in flight"),
                   context, on: connection)
            return
        }
        if let error = admissionError(for: call.method, on: connection) {
            refuse(error, context, on: connection)
            return
        }
        if let error = authenticationError(isPublic: handler?.isPublic == true,
                                           authorization: call.metadata["authorization"],
                                           encrypted: connection.isEncrypted,
                                           loopbackPeer: connection.peer.isLoopback) {
            logger.warn("unauthenticated", ["conn": connection.id, "call": call.callID, "peer": connection.peer,
                                            "method": call.method.path, "reason": error.message])
            refuse(error, context, on: connection)
            return
        }
        guard let handler else {
            refuse(RPCError(.unimplemented, "unknown method \(SafeText.quoted(call.method.path))"), context, on: connection)
            return
        }
        let methodIndex = handler.metricsIndex
        switch handler.execution {
        case .inline(let answer):
            // A deadline already passed (grpc-timeout 0n) ends it as it would a database call,
            // which checks its deadline before it runs (audit 26 F4); no clock read without one.
            do throws(RPCError) {
                try context.checkDeadline()
            } catch {
                answerNow(.failure(error), context, methodIndex: methodIndex, on: connection)
                return
            }
            // Already on the loop: straight into the connection's output, no hand-off.
            // Counted in flight while it runs, so a metrics snapshot includes itself.
            callsInFlight += 1
            let error = answer(call.payload, scratch, context)
            callsInFlight -= 1
            let result: Result<[UInt8], RPCError> = error.map { .failure(publicError($0, context)) }
                ?? .success(scratch.reply)
            answerNow(result, context, methodIndex: methodIndex, on: connection)
        case .deferred(let start):
            let encoder = connection.replyEncoder
            let held = connection.accountsCallMemory ? 0 : Self.heldBytes(of: context)
            connection.usage.addHeldCalls(held)
            let refused = start(call.payload, scratch, context) { [self] result in
                // A job that parked (`CallContext.park`): its resubmission answers. The loop looks
                // at the connection once more: its last write may have come before the park.
                if case .failure(let error) = result, error.code == .resourceExhausted,
                   error == CallContext.mustWaitSignal {
                    replies.withLock { $0.parkedOn.append(context.connectionID) }
                    logger.debug("call_parked", ["conn": context.connectionID, "call": context.callID])
                    return
                }
                let result = result.mapError { publicError($0, context) }
                let (bytes, refusal) = encoder.reply(callID: context.callID, result: result)
                queue(bytes, context: context,
                      finished: FinishedCall(context, methodIndex: methodIndex, result: result, refusal: refusal,
                                             replyBytes: bytes.count), releasing: held)
            }
            if let refused {
                connection.usage.addHeldCalls(-held)
                // A request the handler could not decode: answered here, like an inline call.
                answerNow(.failure(publicError(refused, context)), context, methodIndex: methodIndex, on: connection)
            } else {
                // Counted only now: replies are delivered on this thread, never before this returns.
                admitted(context, methodIndex: methodIndex, deadline: call.deadline ?? 0, on: calls)
            }
        case .serverStreaming(let start):
            guard connection.supportsStreaming else {
                refuse(Self.streamingUnsupported(handler.path), context, on: connection)
                return
            }
            let stream = ServerStream(context: context, core: self, encoder: connection.replyEncoder,
                                      methodIndex: methodIndex)
            if let refused = start(call.payload, scratch, context, stream) {
                answerNow(.failure(publicError(refused, context)), context, methodIndex: methodIndex, on: connection)
                return
            }
            admitted(context, methodIndex: methodIndex, deadline: 0, on: calls)
            calls.streams[call.callID] = stream
        case .bidirectional(let start):
            guard connection.supportsStreaming else {
                refuse(Self.streamingUnsupported(handler.path), context, on: connection)
                return
            }
            let stream = ServerStream(context: context, core: self, encoder: connection.replyEncoder,
                                      methodIndex: methodIndex)
            admitted(context, methodIndex: methodIndex, deadline: 0, on: calls)
            calls.streams[call.callID] = stream
            calls.receivers[call.callID] = start(context, stream)
        }
    }

    /// What a call waiting for the store holds, as the memory budget counts it: its request as
    /// received (decoded, with its metadata, it takes about that again) and 1 KiB for its context
    /// and job. Measured: 100 connections × 1,024 queued calls held 0.8 KB each, 8 KB each with
    /// 7 KB of metadata.
    static func heldBytes(of context: CallContext) -> Int { context.requestBytes + 1024 }

    /// What a transport without streams answers a streaming method with.
    static func streamingUnsupported(_ path: String) -> RPCError {
        RPCError(.unimplemented, "\(path) is a streaming method, which the lean protocol does not carry; "
                 + "call it with gRPC over HTTP/2")
    }

    /// Counts a call in flight until its end is delivered; `deadline` (0: none) is when
    /// `expireCalls` answers it if the store has not.
    private func admitted(_ context: CallContext, methodIndex: Int, deadline: UInt64, on calls: CallBook) {
        calls.inFlight += 1
        calls.ids.insert(InFlightCall(serial: context.serial, deadline: deadline, methodIndex: methodIndex,
                                      receivedAt: context.receivedAt, requestBytes: context.requestBytes),
                         forKey: context.callID)
        callsInFlight += 1
    }

    /// One more client message of bidirectional call `callID`; ignored once it half-closed or ended.
    func receive(_ payload: UnsafeRawBufferPointer, callID: UInt64, on connection: some CallConnection) {
        connection.calls.receivers[callID]?.received(payload, scratch: scratch)
    }

    /// The client of bidirectional call `callID` sent its last message.
    func halfClose(callID: UInt64, on connection: some CallConnection) {
        connection.calls.receivers.removeValue(forKey: callID)?.halfClosed()
    }

    /// The transport cancelled call `callID` (the client reset it): its handler stops being fed
    /// and its stream drops further messages. The call still ends (and frees its slot) when its
    /// handler finishes.
    func cancel(callID: UInt64, on connection: some CallConnection) {
        connection.calls.streams[callID]?.cancel()
        connection.calls.receivers.removeValue(forKey: callID)?.cancelled()
    }

    /// Ends every streaming call whose deadline passed by `now` with DEADLINE_EXCEEDED (the
    /// server's tick calls it): its handler is told, and its slot is freed once the end is delivered.
    func expireStreams(now: UInt64) {
        for connection in connections.values where !connection.calls.streams.isEmpty {
            let calls = connection.calls
            for (callID, stream) in calls.streams {
                guard let deadline = stream.context.deadline, deadline <= now else { continue }
                end(stream, callID: callID, on: calls,
                    RPCError(.deadlineExceeded, "deadline of \(stream.context.method) exceeded"))
            }
        }
    }

    /// Answers every unary call whose deadline passed by `now` and whose reply the store has not
    /// made yet with DEADLINE_EXCEEDED (the server's tick calls it); its call id is free for the
    /// client's next call. The store's work goes on: a call it has not started is never executed
    /// (its operation checks the deadline first), and a write it already runs may still commit, as
    /// the status allows (PROTOCOL.md §3). Until the store is done the call still counts in flight,
    /// against `--max-calls-per-connection` too (so expired calls cannot pile up in the store
    /// unbounded); its reply is then dropped.
    func expireCalls(now: UInt64) {
        for connection in connections.values where connection.calls.inFlight > 0 {
            let calls = connection.calls
            var expired: [(UInt64, InFlightCall)] = []
            calls.ids.forEach { callID, call in
                if call.deadline != 0 && call.deadline <= now { expired.append((callID, call)) }
            }
            guard !expired.isEmpty else { continue }
            for (callID, call) in expired {
                calls.ids.removeValue(forKey: callID)
                expiredSerials.insert(call.serial)
                let error = RPCError(.deadlineExceeded, "deadline of \(metrics.methodPaths[call.methodIndex]) exceeded")
                let replyBytes = connection.appendReply(callID: callID, result: .failure(error)).bytes
                finished(FinishedCall(call, callID: callID, on: connection, code: error.code, message: error.message,
                                      replyBytes: replyBytes),
                         connectionID: connection.id, now: now)
            }
            connection.flushAnswers()
        }
    }

    /// Ends every streaming call still open with `error` (a drain that timed out); returns how many.
    @discardableResult
    func endStreams(_ error: RPCError) -> Int {
        connections.values.reduce(0) { ended, connection in ended + endStreams(on: connection, error) }
    }

    /// Ends every streaming call of `connection` with `error`; returns how many. Also for a peer
    /// that sent end of stream: it can no longer half-close, reset or open a flow-control window,
    /// so a stream would stay open for as long as its handler likes (its unary calls still run
    /// to their replies).
    @discardableResult
    func endStreams(on connection: some CallConnection, _ error: RPCError) -> Int {
        let calls = connection.calls
        var ended = 0
        for (callID, stream) in calls.streams where end(stream, callID: callID, on: calls, error) { ended += 1 }
        return ended
    }

    /// Ends streaming call `callID` with `error` on the transport's behalf (e.g. its client does
    /// not read): its handler is told, and its slot is freed once the end is delivered.
    func end(callID: UInt64, on connection: some CallConnection, _ error: RPCError) {
        let calls = connection.calls
        guard let stream = calls.streams[callID] else { return }
        end(stream, callID: callID, on: calls, error)
    }

    @discardableResult
    private func end(_ stream: ServerStream, callID: UInt64, on calls: CallBook, _ error: RPCError) -> Bool {
        let ended = stream.end(error)
        calls.receivers.removeValue(forKey: callID)?.cancelled()
        return ended
    }

    /// Why a call may not start now, if it may not.
    ///
    /// Calls answered on the loop (health, reflection, admin) hold nothing once their reply is
    /// taken: the per-connection call limit does not count them. But no call starts while the
    /// peer leaves more than `--max-output-bytes` of replies untaken, or holds more than its
    /// share of the memory budget (over HTTP/2, a closed flow-control window holds replies in
    /// the session, where reading on does not stop: the peer must be read to see its
    /// WINDOW_UPDATEs).
    func admissionError(for method: ResolvedMethod, on connection: some CallConnection) -> RPCError? {
        // Health checks and watches still run while draining, so connected clients see NOT_SERVING;
        // so do the calls of an HTTP/2 client that has not seen the shutdown notice yet.
        if isDraining && method.path != HealthMethods.check.path && method.path != HealthMethods.watch.path
            && !connection.takesCallsWhileDraining {
            return RPCError.unavailable("server is shutting down")
        }
        if case .deferred = method.handler?.execution {
            if connection.calls.inFlight >= configuration.maxCallsPerConnection {
                return .tooManyCallsInFlight(limit: configuration.maxCallsPerConnection)
            }
            // Not refused for the connection's unread replies: a read waits for room when it
            // comes to run (`ConnectionUsage.mustWait`), since a client reading as fast as it
            // can leaves the replies just made unread too, and a write's reply is small. Refused
            // when its connection's waiting calls hold too much, or for the server-wide budget.
            return connection.usage.storeCallAdmissionError()
        }
        let unsent = connection.unsentReplyBytes
        if unsent > configuration.maxBufferedOutputBytes {
            return RPCError(.resourceExhausted,
                            "this connection leaves \(unsent) bytes of replies unread (limit \(configuration.maxBufferedOutputBytes), "
                                + "--max-output-bytes); read them, or open the HTTP/2 flow-control window, before sending more calls")
        }
        guard let handler = method.handler else { return nil }
        if case .inline = handler.execution { return connection.usage.admissionError() }
        if connection.calls.inFlight >= configuration.maxCallsPerConnection {
            return .tooManyCallsInFlight(limit: configuration.maxCallsPerConnection)
        }
        return connection.usage.admissionError()
    }

    /// Submits again the calls of `connection` that waited for room (`ConnectionUsage.park`),
    /// once it has some (or has closed).
    func resumeParkedCalls(on connection: some CallConnection) {
        let usage = connection.usage
        guard usage.hasParkedCalls else { return }
        let calls = usage.takeParkedIfRoom(limit: Self.parkedCallsResumedAtOnce)
        guard !calls.isEmpty else { return }
        store.submitBatch {
            for call in calls { call.resubmit() }
        }
    }

    /// How many parked calls of one connection go back to the store at a time; their replies,
    /// written, bring the next ones.
    static let parkedCallsResumedAtOnce = 16

    /// Answers a call with `error` on the loop, without reaching its handler; counts and access-logs it.
    func refuse(_ error: RPCError, _ context: CallContext, on connection: some CallConnection) {
        answerNow(.failure(publicError(error, context)), context, methodIndex: metrics.index(of: context.method),
                  on: connection, method: context.method)
    }

    /// Counts and access-logs a call its transport answered itself before the core had it (the
    /// HTTP/2 session: a wrong content-type, a malformed header, an oversize message…), as a
    /// refused call is; `path` nil when the request named none.
    func countAnsweredByTransport(callID: UInt64, path: String?, _ error: RPCError, receivedAt: UInt64,
                                  on connection: some CallConnection) {
        let shownPath = path ?? "(no :path)"
        let methodIndex = metrics.index(of: shownPath)
        metrics.started(method: methodIndex)
        finished(FinishedCall(callID: callID, methodIndex: methodIndex, code: error.code, message: error.message,
                              receivedAt: receivedAt, peer: connection.peer, requestBytes: 0,
                              replyBytes: error.message.utf8.count, clientCertificate: connection.clientCertificate),
                 connectionID: connection.id, now: MonotonicClock.nanoseconds(), method: shownPath)
    }

    /// Puts a call's reply straight into its connection's output and counts it finished.
    private func answerNow(_ result: Result<[UInt8], RPCError>, _ context: CallContext, methodIndex: Int,
                           on connection: some CallConnection, method: String? = nil) {
        let (replyBytes, refusal) = connection.appendReply(callID: context.callID, result: result)
        finished(FinishedCall(context, methodIndex: methodIndex, result: result, refusal: refusal, replyBytes: replyBytes),
                 connectionID: context.connectionID, now: MonotonicClock.nanoseconds(), method: method)
    }

    // MARK: - Errors

    /// The error the client sees for `error`: INTERNAL (a bug, or a database failure) is logged
    /// here, with its message and cause, under a fresh reference, and the client gets only
    /// the reference. A database failure the operator must see to (an I/O error, a full disk,
    /// a read-only or damaged file) is logged as `database_failed`, and the client gets its
    /// status as it is. Any thread.
    func publicError(_ error: RPCError, _ context: CallContext) -> RPCError {
        guard error.code == .internal else {
            if let cause = error.cause as? any DatabaseError, cause.needsTheOperator {
                logger.error("database_failed", ["conn": context.connectionID, "call": context.callID,
                                                 "method": context.method, "status": error.code.name,
                                                 "error": error.logDescription])
            }
            return error
        }
        let reference = InternalErrorReference.make()
        logger.error("call_failed", ["conn": context.connectionID, "call": context.callID, "method": context.method,
                                     "status": error.code.name, "ref": reference, "error": error.logDescription])
        return RPCError(.internal, "internal error (ref \(reference)); the server log has the details")
    }

    // MARK: - Replies

    /// Queues bytes for `context`'s connection, from any thread; `wakeForReplies()` has the loop
    /// take them. The bytes count in the connection's budget from now until the loop takes them.
    func queue(_ bytes: [UInt8], context: CallContext, finished: FinishedCall?, releasing heldCallBytes: Int = 0) {
        context.usage?.add(bytes.count)
        let reply = PendingReply(connectionID: context.connectionID, callID: context.callID, serial: context.serial,
                                 usage: context.usage, bytes: bytes, finished: finished, heldCallBytes: heldCallBytes)
        replies.withLock { $0.pending.append(reply) }
    }

    /// Has the loop deliver the queued replies, unless it was woken for them already.
    /// Store threads call it once per batch of completions (a commit's replies wake the loop
    /// once, not once each: on a busy core each wake-up would let the loop preempt the writer).
    func wakeForReplies() {
        let wake = replies.withLock { queue in
            guard (!queue.pending.isEmpty || !queue.parkedOn.isEmpty) && !queue.wakeScheduled else { return false }
            queue.wakeScheduled = true
            return true
        }
        if wake { onLoop { [self] in deliverReplies() } }
    }

    /// Moves queued replies to their connections, then tells each connection once.
    func deliverReplies() {
        var batch: [PendingReply] = []
        var parkedOn: [UInt64] = []
        replies.withLock { queue in
            swap(&batch, &queue.pending)
            swap(&parkedOn, &queue.parkedOn)
            queue.wakeScheduled = false
        }
        var touched: [any CallConnection] = []
        var slotsFreed: [any CallConnection] = []
        deliveryBatch &+= 1
        let now = MonotonicClock.nanoseconds()
        for reply in batch {
            // Out of the queue: counted again by the connection as its output, if it is still open.
            reply.usage?.remove(reply.bytes.count)
            if reply.heldCallBytes != 0 { reply.usage?.addHeldCalls(-reply.heldCallBytes) }
            // The end of a call answered at its deadline (`expireCalls`): it only frees the slot.
            let late = reply.finished != nil && !expiredSerials.isEmpty && expiredSerials.remove(reply.serial) != nil
            if let finished = reply.finished {
                callsInFlight -= 1
                if !late { self.finished(finished, connectionID: reply.connectionID, now: now) }
            }
            guard let connection = connections[reply.connectionID] else { continue }
            let calls = connection.calls
            if calls.deliveryBatch != deliveryBatch {
                calls.deliveryBatch = deliveryBatch
                touched.append(connection)
            }
            if reply.finished != nil {
                calls.inFlight -= 1
                if late {
                    // Nothing to send, but the freed slot may be what a half-closed connection
                    // waits for to close.
                    slotsFreed.append(connection)
                    continue
                }
                calls.ids.removeValue(forKey: reply.callID)
                if !calls.streams.isEmpty, calls.streams.removeValue(forKey: reply.callID) != nil {
                    calls.receivers.removeValue(forKey: reply.callID)?.cancelled()
                }
            }
            connection.deliver(reply.bytes, callID: reply.callID, isFinal: reply.finished != nil)
        }
        // Frames read while resuming reach the store threads with one wake-up.
        store.submitBatch {
            for connection in touched { connection.repliesDelivered() }
            for connection in slotsFreed { connection.flushAnswers() }
            for id in parkedOn { if let connection = connections[id] { resumeParkedCalls(on: connection) } }
        }
        afterDelivery()
    }

    // MARK: - Metrics and access log

    /// Counts a finished call in the metrics and writes its access-log line (with
    /// `method` as the client sent it, when given: unknown names are counted as `unknown`).
    func finished(_ call: FinishedCall, connectionID: UInt64, now: UInt64, method: String? = nil) {
        let nanoseconds = now &- call.receivedAt
        metrics.record(method: call.methodIndex, code: call.code, nanoseconds: nanoseconds)
        guard configuration.accessLog else { return }
        let path = method ?? metrics.methodPaths[call.methodIndex]
        if let subject = call.clientCertificate {
            logger.info("call", ["conn": connectionID, "call": call.callID, "peer": call.peer, "client_cert": subject,
                                 "method": path, "status": call.code.name, "message": call.message,
                                 "duration_us": nanoseconds / 1000, "bytes_in": call.requestBytes,
                                 "bytes_out": call.replyBytes])
        } else if call.message.isEmpty {
            logger.info("call", ["conn": connectionID, "call": call.callID, "peer": call.peer, "method": path,
                                 "status": call.code.name, "duration_us": nanoseconds / 1000,
                                 "bytes_in": call.requestBytes, "bytes_out": call.replyBytes])
        } else {
            logger.info("call", ["conn": connectionID, "call": call.callID, "peer": call.peer, "method": path,
                                 "status": call.code.name, "message": call.message, "duration_us": nanoseconds / 1000,
                                 "bytes_in": call.requestBytes, "bytes_out": call.replyBytes])
        }
    }
}
