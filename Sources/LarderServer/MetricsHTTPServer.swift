import LarderReactor
import LarderSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Serves `GET /metrics` in the Prometheus text format over plain HTTP/1.x,
/// on its own thread so a scrape never runs on (or waits for) the RPC loop
/// beyond taking a snapshot.
///
/// Deliberately small: `Connection: close`, a request head of at most 8 KiB that must
/// arrive within 2 seconds of the accept, a response that must be taken within 10 seconds.
/// Up to 16 connections are served at once, without blocking (`MetricsHTTPExchange`), so a
/// slow or stalled client holds one of them until its deadline, never a scrape.
/// `GET`/`HEAD /metrics` → 200; another path → 404; another method → 405.
final class MetricsHTTPServer: Sendable {
    /// Renders the page body; nil when the server cannot produce it now (→ 503).
    typealias Render = @Sendable () -> String?

    static let maxRequestBytes = 8192
    /// From the accept to the end of the request head.
    static let headTimeoutNanoseconds: UInt64 = 2_000_000_000
    /// From the end of the head to the last byte of the response taken by the client.
    static let responseTimeoutNanoseconds: UInt64 = 10_000_000_000
    /// Connections served at once; more wait in the listen backlog.
    static let maxConnections = 16

    private let listener: TCPListener
    private let render: Render
    private let stopping = Atomic<Bool>(false)
    private let thread = LockedValue<SystemThread?>(nil)
    let address: SocketAddress

    /// Listens on `listener`, bound already (`Server.StartupSockets`); `start` serves it.
    init(listener: TCPListener, render: @escaping Render) throws(SystemError) {
        try listener.listen(backlog: 64)
        self.listener = listener
        self.address = listener.address
        self.render = render
    }

    /// Starts accepting on a background thread.
    func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            thread = SystemThread(name: "larder-metrics") { [self] in serveLoop() }
        }
    }

    /// Stops accepting (within 200 ms), waits for the thread and closes the socket.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        let running = thread.withLock { thread -> SystemThread? in
            defer { thread = nil }
            return thread
        }
        running?.join()
        listener.close()
    }

    /// Polls the listener (while there is room) and every exchange, steps those that are
    /// ready and ends those past their deadline; wakes at least every 200 ms to see `stop`.
    private func serveLoop() {
        var exchanges: [MetricsHTTPExchange] = []
        defer { exchanges.forEach { $0.finish() } }
        // A failed accept (out of descriptors) leaves the listener readable: rest a moment, not spin.
        var acceptPausedUntil: UInt64 = 0
        while !stopping.load(ordering: .relaxed) {
            let accepting = exchanges.count < Self.maxConnections && MonotonicClock.nanoseconds() >= acceptPausedUntil
            var polled = [pollfd(fd: accepting ? listener.fd : -1, events: Int16(POLLIN), revents: 0)]
            polled += exchanges.map { pollfd(fd: $0.fd, events: Int16($0.wantsWrite ? POLLOUT : POLLIN), revents: 0) }
            let before = MonotonicClock.nanoseconds()
            let nearest = exchanges.map { $0.deadline > before ? ($0.deadline - before) / 1_000_000 + 1 : 0 }.min() ?? 200
            _ = poll(&polled, nfds_t(polled.count), Int32(min(nearest, 200)))  // on failure no revents: deadlines still run
            let now = MonotonicClock.nanoseconds()
            for (exchange, entry) in zip(exchanges, polled.dropFirst()) where entry.revents != 0 {
                if exchange.wantsWrite { exchange.writable() } else { exchange.readable(now: now, respond: respond) }
            }
            if polled[0].revents != 0 {
                do {
                    while exchanges.count < Self.maxConnections, let accepted = try listener.accept() {
                        let exchange = MetricsHTTPExchange(fd: accepted.fd, now: now)
                        exchange.readable(now: now, respond: respond)
                        exchanges.append(exchange)
                    }
                } catch {
                    acceptPausedUntil = now + 200_000_000
                }
            }
            for exchange in exchanges where !exchange.isDone && now >= exchange.deadline { exchange.expire() }
            exchanges.removeAll { $0.isDone }
        }
    }

    /// The response to a request line (nil: none could be read).
    private func respond(_ requestLine: String?) -> [UInt8] {
        guard let requestLine else { return Self.response(status: "400 Bad Request", body: "bad request\n") }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            return Self.response(status: "400 Bad Request", body: "bad request\n")
        }
        let method = String(parts[0])
        let path = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else {
            return Self.response(status: "404 Not Found", body: "not found; metrics are at /metrics\n")
        }
        guard method == "GET" || method == "HEAD" else {
            return Self.response(status: "405 Method Not Allowed", body: "only GET\n", extraHeaders: "Allow: GET, HEAD\r\n")
        }
        guard let body = render() else {
            return Self.response(status: "503 Service Unavailable", body: "metrics unavailable\n")
        }
        return Self.response(status: "200 OK", body: body, contentType: PrometheusText.contentType, headOnly: method == "HEAD")
    }

    private static func response(status: String, body: String, contentType: String = "text/plain; charset=utf-8",
                                 extraHeaders: String = "", headOnly: Bool = false) -> [UInt8] {
        let bodyBytes = Array(body.utf8)
        var response = Array(("HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\n"
            + "Content-Length: \(bodyBytes.count)\r\n\(extraHeaders)Connection: close\r\n\r\n").utf8)
        if !headOnly { response += bodyBytes }
        return response
    }
}
