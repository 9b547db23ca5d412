import LarderAPI
import LarderSystem
import LarderTLS
public import LarderReactor
public import LarderStore
public import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// The Larder RPC server: one epoll event loop for all sockets, the store's
/// threads for the work.
///
/// Two halves: the `CallCore` (routing, admission, auth, handlers, replies,
/// metrics, access log), which knows no wire format, and the lean transport
/// (`Connection`, `Server+Calls`): the listener, the connections, the
/// length-prefixed frames and envelopes. The loop reads frames, unpacks
/// envelopes into `IncomingCall`s and starts them in the core; replies come back
/// through each connection's `CallConnection` side. All state is confined to the
/// loop thread, hence `@unchecked Sendable`.
public final class Server: @unchecked Sendable {
    public let configuration: ServerConfiguration
    let loop: EventLoop
    let logger: Logger
    let store: any Store
    let core: CallCore
    let health: HealthStatus
    let listener: TCPListener
    /// Calls, latencies, connections and bytes; touched only on the loop thread.
    let metrics: MetricsRecorder
    let metricsHTTP: MetricsHTTPServer?
    var listening = true
    /// Memory held for peers (unwritten replies, undecoded requests), all connections together.
    let budget: MemoryBudget
    /// Accepting stopped after a failed accept (out of descriptors) until this monotonic time.
    var acceptPausedUntil: UInt64?
    /// Failed accepts not yet logged, and when the last line about them went out.
    var acceptFailuresUnlogged = 0
    var acceptFailureLoggedAt: UInt64?
    var lastAcceptError: SystemError?
    /// A descriptor in reserve, to refuse connections with when the process is out of them.
    let spareDescriptor = SpareDescriptor()
    /// When the last line about the exhausted memory budget went out.
    var budgetExhaustedLoggedAt: UInt64?
    /// The most memory held for peers since free memory was last given back to the system.
    var budgetPeak = 0
    /// The most connections open since free memory was last given back to the system
    /// (raised at each accept, so a short burst counts).
    var connectionPeak = 0
    /// Connection ids in accept order, from `silentQueueHead` on: those that had sent nothing
    /// when last looked at, the candidates a full server evicts (`Server+Accepting`). Entries of
    /// connections that spoke or closed are skipped when met, and dropped now and then.
    var silentQueue: [UInt64] = []
    var silentQueueHead = 0
    /// `metrics.trafficCount` at the last tick, when it last changed, and whether free memory is to
    /// be given back once the server has been quiet for `heapReturnIdleSeconds`.
    var trafficAtLastTick: UInt64 = 0
    var lastTrafficAt: UInt64 = 0
    var heapReturnOwed = false
    /// The open connections; owned by the loop's thread, checked on every access in debug builds.
    private let boundConnections: LoopBound<[UInt64: Connection]>
    var connections: [UInt64: Connection] {
        get { boundConnections.value }
        _modify { yield &boundConnections.value }
    }
    var drainDeadline: UInt64?
    /// When the drain began (SIGTERM); nil before.
    var drainStartedAt: UInt64?
    /// True while `finishDrainIfDone` runs: what it writes and closes calls it again (a flush
    /// that empties a connection's output, a close), which then only asks for another pass.
    /// Nested, 5,000 silent HTTP/2 connections took the loop's stack 17,000 frames deep.
    var finishingDrain = false
    var drainPassWanted = false
    var stopped = false
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// What new TLS connections are served with (replaced on SIGHUP); nil when TLS is off.
    var tlsContext: TLSServerContext?
    /// Scratch for the plaintext of one TLS read (its capacity is kept).
    var tlsPlaintext: [UInt8] = []
    /// TLS handshakes in progress (each holds a slot, `--tls-max-handshakes`).
    var tlsHandshakesInProgress = 0
    /// Connections waiting for a handshake slot, oldest first (ids; closed ones are skipped).
    var tlsHandshakeQueue: [UInt64] = []
    /// Connections in the order they took a handshake slot, from `tlsSlotHoldersHead` on (ids;
    /// those whose handshake ended are skipped): the oldest holder is evicted for a new one.
    var tlsSlotHolders: [UInt64] = []
    var tlsSlotHoldersHead = 0
    /// Where the served certificate stood when last logged (`tls_certificate`); nil before.
    var tlsCertificateState: TLSCertificateValidity.State?
    /// Where SIGHUP's reload stands.
    var reloadState = ReloadState.idle
    /// Reads the files a reload puts in force; a test replaces it to hold a reload mid-read.
    var secretFilesReader: @Sendable (ServerConfiguration, TLSServerContext?) -> SecretFiles = SecretFiles.read

    /// Calls started and not yet answered, all connections together.
    var callsInFlight: Int { core.callsInFlight }

    /// What a server starts with from its token and TLS files, read and checked once.
    public struct StartupFiles: Sendable {
        let token: BearerToken?
        let tlsContext: TLSServerContext?

        /// Reads the token file and the TLS files, and checks the configuration. A caller that
        /// reads them before opening the database refuses a bad file without leaving a new
        /// database behind (a SQLite file was made and seeded for nothing: audit 27 L14).
        public static func load(_ configuration: ServerConfiguration) throws(RPCError) -> StartupFiles {
            let token = try configuration.authTokenFile.map { path throws(RPCError) in try BearerToken.load(path: path) }
            try configuration.validate()
            return StartupFiles(token: token, tlsContext: try Server.loadTLSContext(configuration))
        }
    }

    /// The server's listening sockets, bound but not yet listening. A caller that binds them
    /// before opening the database refuses a busy or bad address without creating, seeding or
    /// migrating the database first (audit 35 M2); until the server listens, once the database
    /// is open (a long migration included), connections to them are refused, as to a server
    /// not started.
    public struct StartupSockets: Sendable {
        let listener: TCPListener
        let metricsListener: TCPListener?

        /// Binds `--listen` and `--metrics-listen`.
        public static func bind(_ configuration: ServerConfiguration) throws(RPCError) -> StartupSockets {
            let listener: TCPListener
            do {
                listener = try TCPListener(binding: configuration.listen)
            } catch {
                throw RPCError.unavailable("cannot listen on \(configuration.listen): \(error.reason)")
            }
            guard let metricsAddress = configuration.metricsListen else {
                return StartupSockets(listener: listener, metricsListener: nil)
            }
            do {
                return StartupSockets(listener: listener, metricsListener: try TCPListener(binding: metricsAddress))
            } catch {
                listener.close()
                throw RPCError.unavailable("cannot listen for metrics on \(metricsAddress): \(error.reason)")
            }
        }
    }

    /// Listens on the server's sockets; `run()` starts serving. `files` and `sockets`: what
    /// `StartupFiles.load` read and `StartupSockets.bind` bound already for this configuration
    /// (nil: read or bind them here).
    public init(configuration: ServerConfiguration, store: any Store, logger: Logger,
                files: StartupFiles? = nil, sockets: StartupSockets? = nil) throws(RPCError) {
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.budget = MemoryBudget(limit: configuration.memoryBudgetBytes,
                                   perConnectionLimit: configuration.maxBufferedOutputBytes)
        let health = HealthStatus(serviceNames: LarderServices.served.map(\.name))
        self.health = health
        let metrics = MetricsRecorder(methodPaths: LarderServices.methodPaths)
        self.metrics = metrics
        let router = try LarderServices.router(store: store, health: health, metrics: metrics)
        let loaded: StartupFiles
        if let files { loaded = files } else { loaded = try StartupFiles.load(configuration) }
        let token = loaded.token
        self.tlsContext = loaded.tlsContext
        let bound: StartupSockets
        if let sockets { bound = sockets } else { bound = try StartupSockets.bind(configuration) }
        do {
            self.loop = try EventLoop()
            try bound.listener.listen()
            self.listener = bound.listener
        } catch {
            throw RPCError.unavailable("cannot listen on \(configuration.listen): \(error.reason)")
        }
        let loop = self.loop
        self.boundConnections = LoopBound([:], on: loop)
        self.core = CallCore(configuration: configuration, store: store, router: router, metrics: metrics,
                             token: token, logger: logger, onLoop: { loop.execute($0) })
        if let metricsListener = bound.metricsListener {
            do {
                let types = router.grpcTypes
                metricsHTTP = try MetricsHTTPServer(listener: metricsListener) {
                    Self.snapshot(of: metrics, on: loop).map { PrometheusText.render($0, types: types) }
                }
            } catch {
                let address = configuration.metricsListen ?? metricsListener.address  // as configured
                throw RPCError.unavailable("cannot listen for metrics on \(address): \(error.reason)")
            }
        } else {
            metricsHTTP = nil
        }
        metrics.gauges = { [unowned self] in
            MetricsRecorder.Gauges(connectionsOpen: connections.count, callsInFlight: callsInFlight,
                                   memoryHeldBytes: budget.usedBytes, callsParked: budget.parkedCalls,
                                   callsParkedTotal: budget.parksSinceStart)
        }
        core.afterDelivery = { [unowned self] in finishDrainIfDone() }
        let core = self.core
        store.setCompletionsDelivered { [weak core] in core?.wakeForReplies() }
        // The jobs of one loop turn (every connection it read, the replies it delivered and the
        // calls they resumed) wake the store threads once: with a client that sends few calls per
        // read (the gRPC C++ one), a wake-up per read was a thread switch and a read transaction
        // for every few calls.
        loop.aroundTurn = { [store] turn in store.submitBatch(turn) }
        // The read transaction those turns' point reads share ends before the loop sleeps.
        loop.beforeSleep = EventLoop.SleepHook(isPending: { [store] in store.holdsReadSnapshot },
                                               run: { [store] in store.releaseReadSnapshot() })
    }

    /// A consistent snapshot of `metrics`, taken on `loop`, for another thread;
    /// nil when the loop does not answer within 2 seconds.
    static func snapshot(of metrics: MetricsRecorder, on loop: EventLoop) -> Metrics? {
        let answered = ThreadCondition()
        let result = LockedValue<Metrics?>(nil)
        loop.execute {
            let snapshot = metrics.snapshot()
            answered.withLock {
                result.withLock { $0 = snapshot }
                answered.signal()
            }
        }
        let deadline = MonotonicClock.nanoseconds() + 2_000_000_000
        return answered.withLock {
            while result.withLock({ $0 }) == nil {
                let now = MonotonicClock.nanoseconds()
                guard now < deadline else { return nil }
                _ = answered.wait(nanoseconds: deadline - now)
            }
            return result.withLock { $0 }
        }
    }

    /// The address actually bound (the real port when 0 was asked for).
    public var address: SocketAddress { listener.address }

    /// Serves until `shutdown()` (or SIGINT/SIGTERM, when `handleSignals`) has
    /// drained the calls in flight, then closes the store. SIGHUP reloads the token file
    /// and the TLS certificate, key and client CA.
    ///
    /// With `handleSignals`, the caller must have blocked `handledSignals` with
    /// `SignalSource.block` before starting any thread.
    ///
    /// - Returns: false when it could not start serving (`event=listen_failed`: the listener
    ///   or the signal source could not join the event loop); the store is closed then too.
    @discardableResult
    public func run(handleSignals: Bool = true) -> Bool {
        let signals: SignalSource?
        do {
            try loop.register(listener.fd, for: .readable, handler: ListenerHandler(server: self))
            // unowned: the loop keeps the source (and so this closure) registered; a strong self
            // would make server -> loop -> source -> server a cycle that is never freed.
            signals = handleSignals ? try SignalSource(signals: Self.handledSignals, loop: loop) { [unowned self] number in
                logger.info("signal", ["signal": Self.signalName(number)])
                if number == SIGHUP { reload() } else { beginDrain() }
            } : nil
        } catch {
            logger.error("listen_failed", ["error": error])
            store.close()
            return false
        }
        defer { withExtendedLifetime(signals) {} }
        if configuration.tlsEnabled {
            let cleartext = configuration.tlsOnly ? "refused (--tls-only)"
                : configuration.cleartextLimit.map { "health only\($0.remoteOnly ? " from remote peers" : "") (\($0.reason))" }
                ?? "served"
            logger.announce("listening", ["address": address, "tls": "on", "cleartext": cleartext])
        } else {
            logger.announce("listening", ["address": address])
        }
        if let path = configuration.authTokenFile {
            logExposure(SecretFiles.exposure(of: path), path: path, file: "auth token file")
            if let token = core.token { logShortToken(token, path: path) }
        }
        if let key = configuration.tlsKeyFile { logExposure(SecretFiles.exposure(of: key), path: key, file: "TLS private key") }
        if let exposure = configuration.insecureExposure {
            logger.warn("insecure", ["serves": exposure, "because": "--insecure"])
        }
        logCertificateValidity(loaded: true)
        if let metricsHTTP {
            metricsHTTP.start()
            logger.announce("metrics_listening", ["address": metricsHTTP.address])
        }
        defer { metricsHTTP?.stop() }
        loop.run(tickMilliseconds: 250) { [self] in tick() }
        // close_notify tells a peer it missed nothing: not for one whose calls the drain timeout cut short.
        let remaining = Array(connections.values)
        for connection in remaining where connection.callsInFlight == 0 { connection.sendCloseNotify() }
        // What a peer sends now (a late PING answer, a call racing the GOAWAY) is read and dropped
        // before the close, so no reset destroys the last frames it has not read yet.
        LingeringClose.drain(remaining.map(\.fd), milliseconds: Self.lingerMilliseconds)
        for connection in remaining {
            close(connection, reason: "server stopped", notifyPeer: false)
        }
        store.close()
        logger.flushSuppressed(all: true)
        logger.info("stopped", ["calls_in_flight": callsInFlight])
        return true
    }

    /// How long the server, stopping, waits in all for the peers of connections still open
    /// to close their side after it shut down its own (`LingeringClose`).
    static let lingerMilliseconds = 1000

    /// Starts a graceful shutdown: health turns NOT_SERVING, no new connections,
    /// new calls get UNAVAILABLE, calls in flight finish (up to the drain timeout).
    /// Callable from any thread, e.g. a signal handler's queue.
    public func shutdown() {
        loop.execute { [self] in beginDrain() }
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

    /// The status message of the reply: empty for OK, else the error's message.
    var statusMessage: String {
        switch self {
        case .success: return ""
        case .failure(let error): return error.message
        }
    }
}
