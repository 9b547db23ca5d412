import LarderTLS
public import LarderWire
import LarderSystem

/// A connection to a Larder server that carries many calls at once, and reconnects
/// when it ends.
///
/// ```swift
/// let client = try LarderClient(server: ServerAddress(parsing: "127.0.0.1:7411"))
/// let location = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: id))
/// ```
/// Calls may run concurrently from any task; replies are matched by call id.
/// Errors are always `RPCError`: the server's status, or UNAVAILABLE,
/// DEADLINE_EXCEEDED and CANCELLED raised by the client itself.
///
/// When the connection ends (the server's idle timeout, a restart, a network failure), calls
/// waiting on it fail with UNAVAILABLE and are never sent again: only the caller knows whether
/// a call may safely be repeated. When the connection broke or closed under them (rather than
/// the server ending it with a status), each pending call's error has a `RequestDelivery` as its
/// `cause`: `.sent` (the server may have applied it) or `.notSent`, which its message says too;
/// a call made after the connection ended was not sent either, and has none. The next call opens
/// a new connection; while the server cannot be reached, attempts are spaced by
/// `options.reconnectBackoff` and calls in between fail at once with UNAVAILABLE.
public final class LarderClient: Sendable {
    /// The server this client connects to.
    public let server: ServerAddress
    public let options: ClientOptions
    private let link: LockedValue<Link>
    /// Shared by every connection when `options.tls` is set.
    private let tlsContext: TLSClientContext?

    /// The current connection and the reconnect bookkeeping.
    private struct Link: ~Copyable {
        var connection: Connection?
        var closed = false
        /// Failed connect attempts in a row since the connection ended.
        var failures = 0
        var nextAttempt: ContinuousClock.Instant?
        var lastError: RPCError?
        /// The TLS session of the last connection, offered to the next one (an abbreviated handshake).
        var ticket: TLSSessionTicket?
        /// The calls waiting for the connect attempt under way, by waiter number; nil when none is under way.
        var waiting: [UInt64: Waiter]?
        var lastWaiter: UInt64 = 0
    }

    private typealias Waiter = CheckedContinuation<Result<Connection, RPCError>, Never>

    /// What a caller of `usableConnection` does next.
    private enum Next {
        case done(Result<Connection, RPCError>)
        case wait
        case connect(resuming: TLSSessionTicket?)
    }

    /// Connects to `server`, blocking the calling thread for up to `options.connectTimeout`
    /// (later reconnects happen on a thread of their own).
    /// - Throws: UNAVAILABLE `cannot connect to HOST:PORT: <reason>` when the
    ///   server cannot be reached within `options.connectTimeout`.
    public init(server: ServerAddress, options: ClientOptions = .init()) throws(RPCError) {
        self.server = server
        self.options = options
        let tlsContext = try options.tls?.makeContext()
        self.tlsContext = tlsContext
        let connection = try Connection(address: server, connectTimeout: options.connectTimeout,
                                        maxFrameBytes: options.maxFrameBytes, tls: tlsContext,
                                        serverName: options.tls?.serverName)
        self.link = LockedValue(Link(connection: connection))
    }

    deinit {
        link.withLock { $0.connection?.close() }
    }

    /// Calls `method` with `request` and decodes its reply.
    ///
    /// - Parameters:
    ///   - timeout: the call's deadline (also sent to the server); nil uses `options.defaultTimeout`.
    ///   - metadata: extra metadata for this call; keys are lower-cased and win over `options.metadata`.
    /// - Throws: the server's status; DEADLINE_EXCEEDED when the timeout passes without a reply;
    ///   UNAVAILABLE when the connection ends or cannot be opened again; CANCELLED after `close()` or task
    ///   cancellation; INTERNAL when the reply is not a valid `Resp`.
    public func call<Req, Resp>(_ method: RPCMethod<Req, Resp>, _ request: Req, timeout: Duration? = nil,
                                metadata: [String: String] = [:]) async throws(RPCError) -> Resp {
        let reply = try await callRaw(path: method.path, payload: ProtoCodec.encode(request),
                                      timeout: timeout, metadata: metadata)
        do {
            return try ProtoCodec.decode(Resp.self, from: reply)
        } catch {
            throw RPCError(.internal, "reply to \(method.path) is not a valid \(Resp.protoName): \(error.message)")
        }
    }

    /// Calls the method at `path` (e.g. `/larder.v1.LocationService/GetLocation`)
    /// with an already encoded request and returns the encoded reply.
    /// - Throws: as `call(_:_:timeout:metadata:)`.
    public func callRaw(path: String, payload: [UInt8], timeout: Duration? = nil,
                        metadata: [String: String] = [:]) async throws(RPCError) -> [UInt8] {
        var merged: [String: String] = [:]
        for (key, value) in options.metadata { merged[key.lowercased()] = value }
        for (key, value) in metadata { merged[key.lowercased()] = value }
        let effectiveTimeout = timeout ?? options.defaultTimeout
        if let effectiveTimeout, effectiveTimeout <= .zero {
            throw RPCError.invalidArgument("timeout must be positive, got \(effectiveTimeout)")
        }
        let connection = try await usableConnection()
        return try await connection.call(method: path, payload: payload, timeout: effectiveTimeout,
                                         metadata: merged).get()
    }

    /// The open connection, or a new one when it has ended and the backoff allows an attempt.
    /// The attempt runs on a thread of its own (a connect and a TLS handshake block for up to
    /// `connectTimeout`; a cooperative thread must not), and concurrent callers wait for it and
    /// share its result.
    /// A call waiting for the attempt ends when its task is cancelled (CANCELLED) or the client
    /// is closed (CANCELLED); its own timeout starts once it has a connection.
    private func usableConnection() async throws(RPCError) -> Connection {
        if let connection = link.withLock({ link in link.connection.flatMap { $0.isUsable() ? $0 : nil } }) {
            return connection
        }
        let waiter = link.withLock { link -> UInt64 in
            link.lastWaiter += 1
            return link.lastWaiter
        }
        let result = await withTaskCancellationHandler {
            await waitForConnection(waiter: waiter)
        } onCancel: {
            let cancelled = link.withLock { $0.waiting?.removeValue(forKey: waiter) }
            cancelled?.resume(returning: .failure(cancelledWhileConnecting))
        }
        // The connecting thread recorded the attempt under `link`'s lock before it resumed
        // us; taking the lock orders this task after it for ThreadSanitizer too, which does
        // not see the concurrency runtime's hand-over (it reported the new connection's
        // fields, written there and read here, as a race).
        link.withLock { _ in }
        return try result.get()
    }

    private func waitForConnection(waiter: UInt64) async -> Result<Connection, RPCError> {
        await withCheckedContinuation { (continuation: Waiter) in
            let next = link.withLock { link -> Next in
                if link.closed { return .done(.failure(closedError)) }
                if Task.isCancelled {
                    return .done(.failure(cancelledWhileConnecting))
                }
                if let connection = link.connection, connection.isUsable() { return .done(.success(connection)) }
                if link.waiting != nil {
                    link.waiting?[waiter] = continuation
                    return .wait
                }
                if let ticket = link.connection?.resumptionTicket { link.ticket = ticket }
                link.connection = nil
                let now = ContinuousClock.now
                if let next = link.nextAttempt, now < next, let last = link.lastError {
                    let wait = formatSeconds(now.duration(to: next))
                    return .done(.failure(RPCError(last.code, "\(last.message) (next attempt in \(wait))")))
                }
                link.waiting = [waiter: continuation]
                return .connect(resuming: link.ticket)
            }
            switch next {
            case .done(let result): continuation.resume(returning: result)
            case .wait: break
            case .connect(let ticket):
                let started = SystemThread(startingIfPossible: "larder-connect") { [self] in
                    connected(Result { () throws(RPCError) in
                        try Connection(address: server, connectTimeout: options.connectTimeout,
                                       maxFrameBytes: options.maxFrameBytes, tls: tlsContext,
                                       serverName: options.tls?.serverName, resuming: ticket)
                    })
                }
                if started == nil {
                    connected(.failure(RPCError(.resourceExhausted,
                        "cannot connect to \(server): the process has no thread left to connect on")))
                }
            }
        }
    }

    /// Records a connect attempt's outcome and hands it to the calls waiting for it.
    private func connected(_ attempt: Result<Connection, RPCError>) {
        let (waiting, result) = link.withLock { link -> ([Waiter], Result<Connection, RPCError>) in
            let waiting = Array((link.waiting ?? [:]).values)
            link.waiting = nil
            switch attempt {
            case .success(let connection) where link.closed:
                connection.close()
                return (waiting, .failure(closedError))
            case .success(let connection):
                link.connection = connection
                link.failures = 0
                link.nextAttempt = nil
                link.lastError = nil
            case .failure(let error):
                link.failures += 1
                let delay = options.reconnectBackoff.delay(afterFailures: link.failures,
                                                           random: Double.random(in: -1...1))
                link.nextAttempt = ContinuousClock.now.advanced(by: delay)
                link.lastError = error
            }
            return (waiting, attempt)
        }
        for continuation in waiting { continuation.resume(returning: result) }
    }

    /// Closes the connection; calls still waiting (for a reply, or for a connect attempt) fail
    /// with CANCELLED, later calls too. Idempotent.
    public func close() {
        let (connection, waiting) = link.withLock { link -> (Connection?, [Waiter]) in
            link.closed = true
            let waiting = Array((link.waiting ?? [:]).values)
            // An attempt under way still ends in `connected`, which closes what it opened.
            if link.waiting != nil { link.waiting = [:] }
            return (link.connection, waiting)
        }
        connection?.close()
        for waiter in waiting { waiter.resume(returning: .failure(closedError)) }
    }

    /// What a call gets once the client is closed.
    private var closedError: RPCError { RPCError(.cancelled, "the client closed the connection to \(server)") }

    /// What a call waiting for a connect attempt gets when its task is cancelled.
    private var cancelledWhileConnecting: RPCError {
        RPCError(.cancelled, "the call was cancelled while connecting to \(server)")
    }

    /// Whether a connection is open now (it may still end before the next call).
    public var isConnected: Bool {
        link.withLock { link in link.connection.map { !$0.hasFailed } ?? false }
    }

    /// The number of calls waiting for a reply (for tests and diagnostics).
    public var pendingCallCount: Int { link.withLock { $0.connection?.pendingCount ?? 0 } }
}
