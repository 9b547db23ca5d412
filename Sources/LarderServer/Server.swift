import LarderAPI
import LarderReactor
import LarderStore
import LarderWire
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Larder RPC server: one epoll event loop for all sockets, the store's
/// threads for the work.
///
/// The loop reads frames, decodes envelopes and hands each call to its
/// handler; handlers answer from the store's threads by pushing framed
/// replies into `replies`, which the loop drains in batches, writing each
/// connection's replies with one send. All other state is confined to the
/// loop thread, hence `@unchecked Sendable`.
public final class Server: @unchecked Sendable {
    public let configuration: ServerConfiguration
    let loop: EventLoop
    let logger: Logger
    private let store: any Store
    private let router: Router
    private let health: HealthStatus
    private let listener: TCPListener
    private let token: BearerToken?
    /// Calls, latencies, connections and bytes; touched only on the loop thread.
    let metrics: MetricsRecorder
    private let metricsHTTP: MetricsHTTPServer?
    private var listening = true
    private var connections: [UInt64: Connection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var callsInFlight = 0
    private var drainDeadline: UInt64?
    private var stopped = false
    private let replies = Mutex<[PendingReply]>([])
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    private struct PendingReply {
        let connectionID: UInt64
        let bytes: [UInt8]
        let finished: FinishedCall
    }

    /// What the metrics and the access log need of a call whose reply is queued.
    private struct FinishedCall {
        let callID: UInt64
        let methodIndex: Int
        let code: StatusCode
        let receivedAt: UInt64
    }

    /// Binds the listening socket; `run()` starts serving.
    public init(configuration: ServerConfiguration, store: any Store, logger: Logger) throws(RPCError) {
        self.configuration = configuration
        self.store = store
        self.logger = logger
        let health = HealthStatus(serviceNames: LarderServices.served.map(\.name))
        self.health = health
        let metrics = MetricsRecorder(methodPaths: LarderServices.methodPaths)
        self.metrics = metrics
        self.router = try LarderServices.router(store: store, health: health, metrics: metrics)
        self.token = try configuration.authTokenFile.map { path throws(RPCError) in try BearerToken.load(path: path) }
        try configuration.validate()
        do {
            self.loop = try EventLoop()
            self.listener = try TCPListener(address: configuration.listen)
        } catch {
            throw RPCError.unavailable("cannot listen on \(configuration.listen): \(error.reason)")
        }
        if let metricsAddress = configuration.metricsListen {
            let loop = self.loop
            do {
                metricsHTTP = try MetricsHTTPServer(address: metricsAddress) {
                    Self.snapshot(of: metrics, on: loop).map(PrometheusText.render)
                }
            } catch {
                throw RPCError.unavailable("cannot listen for metrics on \(metricsAddress): \(error.reason)")
            }
        } else {
            metricsHTTP = nil
        }
        metrics.gauges = { [unowned self] in (connections.count, callsInFlight) }
    }

    /// The address actually bound (the real port when 0 was asked for).
    public var address: SocketAddress { listener.address }

    /// Serves until `shutdown()` (or SIGINT/SIGTERM, when `handleSignals`) has
    /// drained the calls in flight, then closes the store.
    ///
    /// With `handleSignals`, the caller must have blocked the signals with
    /// `SignalSource.block` before starting any thread.
    public func run(handleSignals: Bool = true) {
        let signals: SignalSource?
        do {
            try loop.register(listener.fd, for: .readable, handler: ListenerHandler(server: self))
            signals = handleSignals ? try SignalSource(signals: [SIGINT, SIGTERM], loop: loop) { [self] number in
                logger.info("signal", ["signal": number == SIGINT ? "SIGINT" : "SIGTERM"])
                beginDrain()
            } : nil
        } catch {
            logger.error("listen_failed", ["error": error])
            return
        }
        defer { withExtendedLifetime(signals) {} }
        logger.info("listening", ["address": address])
        if let metricsHTTP {
            metricsHTTP.start()
            logger.info("metrics_listening", ["address": metricsHTTP.address])
        }
        defer { metricsHTTP?.stop() }
        loop.run(tickMilliseconds: 250) { [self] in tick() }
        for connection in Array(connections.values) { close(connection, reason: "server stopped") }
        store.close()
        logger.info("stopped", ["calls_in_flight": callsInFlight])
    }

    /// Starts a graceful shutdown: health turns NOT_SERVING, no new connections,
    /// new calls get UNAVAILABLE, calls in flight finish (up to the drain timeout).
    /// Callable from any thread, e.g. a signal handler's queue.
    public func shutdown() {
        loop.execute { [self] in beginDrain() }
    }

    // MARK: - Accepting

    fileprivate func acceptConnections() {
        while listening {
            let accepted: (fd: Int32, peer: SocketAddress)?
            do {
                accepted = try listener.accept()
            } catch {
                logger.warn("accept_failed", ["error": error])
                return
            }
            guard let (fd, peer) = accepted else { return }
            if connections.count >= configuration.maxConnections {
                refuse(fd: fd, peer: peer)
                continue
            }
            let connection = Connection(id: nextConnectionID, fd: fd, peer: peer, server: self,
                                        maxFrameBytes: configuration.maxFrameBytes)
            nextConnectionID += 1
            do {
                try loop.register(fd, for: .readable, handler: connection)
            } catch {
                SocketIO.close(fd)
                continue
            }
            connections[connection.id] = connection
            metrics.connectionAccepted()
            logger.debug("connection_opened", ["conn": connection.id, "peer": peer])
        }
    }

    /// Answers a connection over the limit with a connection-level error and closes it.
    private func refuse(fd: Int32, peer: SocketAddress) {
        logger.warn("connection_refused", ["peer": peer, "reason": "max connections (\(configuration.maxConnections)) reached"])
        let frame = ResponseFrame.encode(callID: 0, result: .failure(RPCError(
            .resourceExhausted, "server has reached its maximum of \(configuration.maxConnections) connections")))
        _ = frame.withUnsafeBytes { try? SocketIO.write(fd, $0) }
        SocketIO.close(fd)
    }

    // MARK: - Reading calls

    func connectionReadable(_ connection: Connection) {
        // Bounded: a peer that keeps sending cannot starve the others.
        for _ in 0..<8 {
            let outcome: SocketIO.Outcome
            do {
                outcome = try readBuffer.withUnsafeMutableBytes { raw throws(SystemError) in
                    try SocketIO.read(connection.fd, into: raw)
                }
            } catch {
                close(connection, reason: "read failed: \(error)")
                return
            }
            switch outcome {
            case .endOfStream:
                close(connection, reason: connection.isClosing ? "closed after error" : "peer closed")
                return
            case .wouldBlock:
                return
            case .transferred(let count):
                connection.lastActivity = MonotonicClock.nanoseconds()
                metrics.received(count)
                if connection.isClosing { continue }  // discard what a failed peer still sends
                readBuffer.withUnsafeBytes { connection.decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                processFrames(of: connection)
                connection.flush()
                if connection.readPaused || connection.isClosing { return }
                if count < readBuffer.count { return }
            }
        }
    }

    private func processFrames(of connection: Connection) {
        while !connection.isClosing && !connection.readPaused {
            do {
                let handled: Void? = try connection.decoder.withNextFrame { body in dispatch(body, from: connection) }
                if handled == nil { break }
                // Replies answered on the loop (errors, health) count against the output cap too.
                if connection.bufferedOutputBytes > configuration.maxBufferedOutputBytes { connection.flush() }
            } catch let FrameDecoder.Failure.frameTooLarge(length, limit) {
                rejectOversizedFrame(on: connection, length: length, limit: limit)
                return
            } catch {
                fail(connection, RPCError.internalError("unexpected framing error"))
                return
            }
        }
        connection.partialFrameSince = connection.decoder.bufferedByteCount > 0
            ? (connection.partialFrameSince ?? MonotonicClock.nanoseconds()) : nil
    }

    private func rejectOversizedFrame(on connection: Connection, length: UInt32, limit: Int) {
        let peerKind = PeerSniffer.describe(prefix: connection.decoder.bufferedPrefix)
        let message = peerKind.map { "not a Larder peer (\($0)): frame length \(length) exceeds the maximum of \(limit) bytes" }
            ?? "frame length \(length) exceeds the maximum of \(limit) bytes"
        logger.warn("frame_rejected", ["conn": connection.id, "peer": connection.peer, "reason": message])
        fail(connection, RPCError(.resourceExhausted, message))
    }

    /// Decodes one request envelope and starts its call.
    private func dispatch(_ body: UnsafeRawBufferPointer, from connection: Connection) {
        let envelope: RequestEnvelope
        do {
            envelope = try ProtoCodec.decode(RequestEnvelope.self, from: body)
        } catch {
            logger.warn("envelope_rejected", ["conn": connection.id, "peer": connection.peer, "reason": error.message])
            fail(connection, RPCError.invalidArgument("malformed request envelope: \(error.message)"))
            return
        }
        guard envelope.callID != 0 else {
            fail(connection, RPCError.invalidArgument("call_id must be non-zero"))
            return
        }
        let now = MonotonicClock.nanoseconds()
        let context = CallContext(
            connectionID: connection.id, callID: envelope.callID, method: envelope.method,
            metadata: envelope.metadata,
            deadline: envelope.timeoutMilliseconds > 0 ? now + UInt64(envelope.timeoutMilliseconds) * 1_000_000 : nil,
            receivedAt: now)
        if let error = admissionError(for: envelope, on: connection) {
            connection.enqueue(ResponseFrame.encode(callID: envelope.callID, result: .failure(error)))
            finishedEarly(context, code: error.code)
            return
        }
        let handler = router.handler(for: envelope.method)
        if let token, handler?.isPublic != true, !token.accepts(envelope.metadata["authorization"]) {
            let error = RPCError(.unauthenticated, envelope.metadata["authorization"] == nil
                ? "this server requires a bearer token: send metadata authorization: Bearer <token>"
                : "invalid bearer token")
            logger.warn("unauthenticated", ["conn": connection.id, "call": envelope.callID, "peer": connection.peer,
                                            "method": envelope.method, "reason": error.message])
            connection.enqueue(ResponseFrame.encode(callID: envelope.callID, result: .failure(error)))
            finishedEarly(context, code: error.code)
            return
        }
        guard let handler else {
            let error = RPCError(.unimplemented, "unknown method \"\(envelope.method)\"")
            connection.enqueue(ResponseFrame.encode(callID: envelope.callID, result: .failure(error)))
            finishedEarly(context, code: error.code)
            return
        }
        let methodIndex = handler.metricsIndex
        switch handler.execution {
        case .inline(let answer):
            // Already on the loop: straight into the connection's output, no hand-off.
            // Counted in flight while it runs, so a metrics snapshot includes itself.
            callsInFlight += 1
            let result = answer(envelope.payload, context)
            callsInFlight -= 1
            logIfInternal(result, context)
            connection.appendReply(callID: context.callID, result: result)
            finished(FinishedCall(callID: context.callID, methodIndex: methodIndex, code: result.statusCode,
                                  receivedAt: context.receivedAt),
                     connectionID: context.connectionID, now: MonotonicClock.nanoseconds())
        case .deferred(let start):
            connection.callsInFlight += 1
            callsInFlight += 1
            start(envelope.payload, context) { [self] result in
                logIfInternal(result, context)
                reply(ResponseFrame.encode(callID: context.callID, result: result), to: context.connectionID,
                      finished: FinishedCall(callID: context.callID, methodIndex: methodIndex, code: result.statusCode,
                                             receivedAt: context.receivedAt))
            }
        }
    }

    /// INTERNAL means a bug or a database failure: worth an error line with the call's ids.
    private func logIfInternal(_ result: Result<[UInt8], RPCError>, _ context: CallContext) {
        if case .failure(let error) = result, error.code == .internal {
            logger.error("call_failed", ["conn": context.connectionID, "call": context.callID,
                                         "method": context.method, "status": error.code.name, "error": error.message])
        }
    }

    /// Why a call may not start now, if it may not.
    private func admissionError(for envelope: RequestEnvelope, on connection: Connection) -> RPCError? {
        // Health checks still run while draining, so connected clients see NOT_SERVING.
        if drainDeadline != nil && envelope.method != HealthMethods.check.path {
            return RPCError.unavailable("server is shutting down")
        }
        if connection.callsInFlight >= configuration.maxCallsPerConnection {
            return RPCError(.resourceExhausted,
                            "too many calls in flight on this connection (limit \(configuration.maxCallsPerConnection))")
        }
        return nil
    }

    /// Counts (and access-logs) a call answered on the loop without reaching its handler.
    private func finishedEarly(_ context: CallContext, code: StatusCode) {
        let index = metrics.index(of: context.method)
        finished(FinishedCall(callID: context.callID, methodIndex: index, code: code, receivedAt: context.receivedAt),
                 connectionID: context.connectionID, now: MonotonicClock.nanoseconds(), method: context.method)
    }

    /// Counts a finished call in the metrics and writes its access-log line (with
    /// `method` as the client sent it, when given: unknown names are counted as `unknown`).
    private func finished(_ call: FinishedCall, connectionID: UInt64, now: UInt64, method: String? = nil) {
        let nanoseconds = now &- call.receivedAt
        metrics.record(method: call.methodIndex, code: call.code, nanoseconds: nanoseconds)
        guard configuration.accessLog else { return }
        logger.info("call", ["conn": connectionID, "call": call.callID,
                             "method": method ?? metrics.methodPaths[call.methodIndex],
                             "status": call.code.name, "duration_us": nanoseconds / 1000])
    }

    /// A consistent snapshot of `metrics`, taken on `loop`, for another thread;
    /// nil when the loop does not answer within 2 seconds.
    private static func snapshot(of metrics: MetricsRecorder, on loop: EventLoop) -> Metrics? {
        let result = Mutex<Metrics?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let snapshot = metrics.snapshot()
            result.withLock { $0 = snapshot }
            done.signal()
        }
        guard done.wait(timeout: .now() + 2) == .success else { return nil }
        return result.withLock { $0 }
    }

    // MARK: - Writing replies

    /// Queues a framed reply from any thread; the loop writes it on its next turn.
    private func reply(_ bytes: [UInt8], to connectionID: UInt64, finished: FinishedCall) {
        let wasEmpty = replies.withLock { pending in
            pending.append(PendingReply(connectionID: connectionID, bytes: bytes, finished: finished))
            return pending.count == 1
        }
        if wasEmpty { loop.execute { [self] in deliverReplies() } }
    }

    /// Moves queued replies to their connections and writes each connection once.
    private func deliverReplies() {
        var batch: [PendingReply] = []
        replies.withLock { swap(&batch, &$0) }
        var touched: [Connection] = []
        let now = MonotonicClock.nanoseconds()
        for reply in batch {
            callsInFlight -= 1
            finished(reply.finished, connectionID: reply.connectionID, now: now)
            guard let connection = connections[reply.connectionID] else { continue }
            connection.callsInFlight -= 1
            if connection.bufferedOutputBytes == 0 { touched.append(connection) }
            connection.enqueue(reply.bytes)
        }
        for connection in touched where connections[connection.id] != nil {
            connection.flush()
            // Reading may have paused on a full output buffer or the in-flight limit.
            if !connection.readPaused && connection.decoder.bufferedByteCount > 0 { processFrames(of: connection) }
        }
        finishDrainIfDone()
    }

    // MARK: - Closing

    /// Sends a connection-level error (call id 0), then closes once it is written.
    func fail(_ connection: Connection, _ error: RPCError) {
        guard !connection.isClosing else { return }
        connection.enqueue(ResponseFrame.encode(callID: 0, result: .failure(error)))
        connection.state = .closing(since: MonotonicClock.nanoseconds())
        connection.flush()
    }

    func close(_ connection: Connection, reason: String) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        loop.unregister(connection.fd)
        SocketIO.close(connection.fd)
        logger.debug("connection_closed", ["conn": connection.id, "peer": connection.peer, "reason": reason])
    }

    // MARK: - Timers and shutdown

    private func tick() {
        let now = MonotonicClock.nanoseconds()
        let idleLimit = UInt64(configuration.idleTimeoutSeconds) * 1_000_000_000
        let frameLimit = UInt64(configuration.frameTimeoutSeconds) * 1_000_000_000
        for connection in Array(connections.values) {
            switch connection.state {
            case .closing(let since):
                if now - since > 2_000_000_000 { close(connection, reason: "closed after error") }
            case .open:
                if connection.readPaused {
                    // The server chose not to read; the peer is not slow.
                    connection.partialFrameSince = connection.partialFrameSince.map { _ in now }
                } else if let since = connection.partialFrameSince, now - since > frameLimit {
                    logger.warn("frame_timeout", ["conn": connection.id, "peer": connection.peer])
                    fail(connection, RPCError(.deadlineExceeded,
                                              "frame not completed within \(configuration.frameTimeoutSeconds) s"))
                } else if idleLimit > 0, connection.callsInFlight == 0, connection.bufferedOutputBytes == 0,
                          now - connection.lastActivity > idleLimit {
                    logger.debug("idle_timeout", ["conn": connection.id, "peer": connection.peer])
                    fail(connection, RPCError.unavailable("connection idle for \(configuration.idleTimeoutSeconds) s"))
                }
            }
        }
        if let deadline = drainDeadline, now >= deadline {
            logger.warn("drain_timeout", ["calls_in_flight": callsInFlight])
            stopLoop()
        }
    }

    private func beginDrain() {
        guard drainDeadline == nil else { return }
        health.markNotServing()
        drainDeadline = MonotonicClock.nanoseconds() + UInt64(configuration.drainTimeoutSeconds) * 1_000_000_000
        listening = false
        loop.unregister(listener.fd)
        listener.close()
        logger.info("draining", ["calls_in_flight": callsInFlight, "connections": connections.count])
        finishDrainIfDone()
    }

    private func finishDrainIfDone() {
        guard drainDeadline != nil, callsInFlight == 0 else { return }
        let unwritten = connections.values.contains { $0.bufferedOutputBytes > 0 }
        if !unwritten { stopLoop() }
    }

    private func stopLoop() {
        guard !stopped else { return }
        stopped = true
        loop.stop()
    }
}

/// Accepts connections when the listening socket is readable.
private final class ListenerHandler: EventHandler {
    unowned let server: Server
    init(server: Server) { self.server = server }
    func handle(_ events: IOEvents) { server.acceptConnections() }
}

extension Result where Failure == RPCError {
    /// OK, or the error's code.
    var statusCode: StatusCode {
        switch self {
        case .success: return .ok
        case .failure(let error): return error.code
        }
    }
}
