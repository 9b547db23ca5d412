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
/// Deliberately small: one connection at a time, `Connection: close`, a
/// request head of at most 8 KiB read within 2 seconds. `GET`/`HEAD
/// /metrics` → 200; another path → 404; another method → 405.
final class MetricsHTTPServer: Sendable {
    /// Renders the page body; nil when the server cannot produce it now (→ 503).
    typealias Render = @Sendable () -> String?

    private static let maxRequestBytes = 8192
    private static let ioTimeoutSeconds = 2

    private let listener: TCPListener
    private let render: Render
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<SystemThread?>(nil)
    let address: SocketAddress

    /// Binds `address` now, so a bad address fails at startup.
    init(address: SocketAddress, render: @escaping Render) throws(SystemError) {
        let listener = try TCPListener(address: address, backlog: 64)
        self.listener = listener
        self.address = listener.address
        self.render = render
    }

    /// Starts accepting on a background thread.
    func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            thread = SystemThread(name: "larder-metrics") { [self] in acceptLoop() }
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

    private func acceptLoop() {
        let fd = listener.fd
        while !stopping.load(ordering: .relaxed) {
            var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, 200) > 0 else { continue }
            guard let accepted = try? listener.accept() else { continue }
            serve(accepted.fd)
            SocketIO.close(accepted.fd)
        }
    }

    private func serve(_ fd: Int32) {
        // Blocking I/O with timeouts: a stuck client costs this thread 2 s, never the RPC loop.
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~Int32(O_NONBLOCK))
        var timeout = timeval(tv_sec: Self.ioTimeoutSeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        guard let requestLine = readRequestLine(fd) else {
            respond(fd, status: "400 Bad Request", body: "bad request\n")
            return
        }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            respond(fd, status: "400 Bad Request", body: "bad request\n")
            return
        }
        let method = String(parts[0])
        let path = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else {
            respond(fd, status: "404 Not Found", body: "not found; metrics are at /metrics\n")
            return
        }
        guard method == "GET" || method == "HEAD" else {
            respond(fd, status: "405 Method Not Allowed", body: "only GET\n", extraHeaders: "Allow: GET, HEAD\r\n")
            return
        }
        guard let body = render() else {
            respond(fd, status: "503 Service Unavailable", body: "metrics unavailable\n")
            return
        }
        respond(fd, status: "200 OK", body: body, contentType: PrometheusText.contentType, headOnly: method == "HEAD")
    }

    /// Reads the request head up to its empty line and returns its first line
    /// (without CR LF), or nil on timeout, EOF or oversize.
    private func readRequestLine(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count < Self.maxRequestBytes {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            bytes += chunk[0..<count]
            // The head ends at an empty line (CRLF CRLF, or a bare LF LF from a lax client).
            for index in bytes.indices where bytes[index] == 0x0A && index >= 1 {
                if bytes[index - 1] == 0x0A || (index >= 3 && bytes[(index - 3)...index].elementsEqual([13, 10, 13, 10])) {
                    var line = bytes.prefix { $0 != 0x0A }
                    if line.last == 0x0D { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
            }
        }
        return nil
    }

    private func respond(_ fd: Int32, status: String, body: String, contentType: String = "text/plain; charset=utf-8",
                         extraHeaders: String = "", headOnly: Bool = false) {
        let bodyBytes = Array(body.utf8)
        var response = Array(("HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\n"
            + "Content-Length: \(bodyBytes.count)\r\n\(extraHeaders)Connection: close\r\n\r\n").utf8)
        if !headOnly { response += bodyBytes }
        var offset = 0
        while offset < response.count {
            let written = response.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
