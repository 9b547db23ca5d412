import Foundation
import Glibc
import LarderClient
import LarderWire
import LarderSystem

/// A tiny Larder server on 127.0.0.1:0 for client tests: it accepts one
/// connection, hands every request envelope it reads to the test through
/// `requests`, and sends exactly the replies the test asks for.
final class FakeServer: Sendable {
    let address: ServerAddress
    let requests: AsyncStream<RequestEnvelope>
    private let requestsContinuation: AsyncStream<RequestEnvelope>.Continuation
    /// The sockets, shared with the serving thread, which holds nothing else: once the test
    /// lets go of this server, `deinit` stops that thread.
    private let sockets: Sockets

    /// Starts listening and accepting in a background thread (see `lastResort`); with
    /// `readingPaused`, reads nothing from a connection until `resumeReading()`.
    init(readingPaused: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeServerError.system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else { close(fd); throw FakeServerError.system("bind/listen", errno) }
        let port: UInt16
        do {
            port = try Self.localPort(of: fd)
        } catch {
            close(fd)
            throw error
        }
        self.address = ServerAddress(host: "127.0.0.1", port: port)
        let sockets = Sockets(listenFD: fd, readingPaused: readingPaused)
        self.sockets = sockets
        let (stream, continuation) = AsyncStream.makeStream(of: RequestEnvelope.self)
        self.requests = stream
        self.requestsContinuation = continuation
        let thread = Thread {
            sockets.serve(continuation)
            continuation.finish()
            sockets.end(.served)
        }
        thread.start()
    }

    deinit {
        sockets.stop()
        sockets.end(.released)
    }

    /// The port of a bound socket.
    static func localPort(of fd: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else { throw FakeServerError.system("getsockname", errno) }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Ends `requests` (a test waiting for one more gets nil): the client under test has exited,
    /// so none will come, e.g. after a usage error before it connected.
    func endRequests() {
        requestsContinuation.finish()
    }

    /// Sends one reply frame to the connected client.
    func reply(_ envelope: ResponseEnvelope) {
        sendRaw(Frame.encode(envelope))
    }

    /// Sends raw bytes to the connected client.
    func sendRaw(_ bytes: [UInt8]) {
        sockets.connectionFD.withLock { fd in
            guard fd >= 0 else { return }
            var offset = 0
            bytes.withUnsafeBytes { raw in
                while offset < raw.count {
                    let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if n <= 0 { return }
                    offset += n
                }
            }
        }
    }

    /// Bytes the connection has received that the server has not read (FIONREAD); 0 with no connection.
    var unreadBytes: Int {
        sockets.connectionFD.withLock { fd in
            var count: Int32 = 0
            return fd >= 0 && ioctl(fd, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
        }
    }

    /// Starts reading the connection (see `init(readingPaused:)`).
    func resumeReading() {
        sockets.readingPaused.withLock { $0 = false }
    }

    /// Closes the client's connection (the client sees EOF) and stops serving.
    func closeConnection() {
        sockets.stop()
    }

    /// Closes the client's current connection (the client sees EOF) and accepts the next one.
    func dropConnection() {
        sockets.dropConnection()
    }
}

/// A fake server's listening socket and current connection, and the loop that serves them.
private final class Sockets: Sendable {
    let listenFD: Int32
    let connectionFD = LockedValue<Int32>(-1)
    let readingPaused: LockedValue<Bool>
    private let stopped = LockedValue(false)
    /// Which of the two ends came: the listening socket is closed at the second, when nothing
    /// polls it any more and the test cannot reach it. Until then a stopped server's listener
    /// still takes connections into its backlog (and never answers them).
    private let ended = LockedValue<Set<End>>([])

    enum End: Hashable, Sendable {
        /// The serving thread is done.
        case served
        /// The test let go of the server.
        case released
    }

    init(listenFD: Int32, readingPaused: Bool) {
        self.listenFD = listenFD
        self.readingPaused = LockedValue(readingPaused)
    }

    /// Marks `end`; closes the listening socket when both have come.
    func end(_ end: End) {
        let both = ended.withLock { ended in
            ended.insert(end)
            return ended.count == 2
        }
        if both { close(listenFD) }
    }

    /// Ends serving: the client sees EOF, and the serving thread ends within 100 ms.
    func stop() {
        stopped.withLock { $0 = true }
        dropConnection()
    }

    /// Shuts the current connection down (the client sees EOF).
    func dropConnection() {
        connectionFD.withLock { fd in
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// The longest a fake server serves: a last resort for a test that never stops it, not a
    /// test's time limit. A bound of 30 s used to cut tests off mid-call when the whole suite
    /// ran on a busy machine (56 CLI tests failed at once with "closed by the server").
    private static let lastResort = Duration.seconds(900)

    /// Accepts connections one after another (until stopped or `lastResort` passes) and reads their requests.
    func serve(_ requests: AsyncStream<RequestEnvelope>.Continuation) {
        let start = ContinuousClock.now
        let limit = Self.lastResort
        while ContinuousClock.now - start < limit, !stopped.withLock({ $0 }) {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { return }
            connectionFD.withLock { $0 = client }
            serveConnection(client, start: start, limit: limit, requests)
            connectionFD.withLock { fd in
                close(fd)
                fd = -1
            }
        }
    }

    private func serveConnection(_ client: Int32, start: ContinuousClock.Instant, limit: Duration,
                                 _ requests: AsyncStream<RequestEnvelope>.Continuation) {
        var decoder = FrameDecoder(maxFrameSize: 128 << 20)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while ContinuousClock.now - start < limit, !stopped.withLock({ $0 }) {
            if readingPaused.withLock({ $0 }) {
                usleep(5_000)
                continue
            }
            var cfd = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&cfd, 1, 100) > 0 else { continue }
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { return }
            decoder.append(Array(buffer[0..<count]))
            while let body = try? decoder.next() {
                guard let envelope = try? ProtoCodec.decode(RequestEnvelope.self, from: body) else { return }
                requests.yield(envelope)
            }
        }
    }
}

/// A port on 127.0.0.1 that is bound but not listening, so connecting to it is refused.
final class ClosedPort {
    let port: UInt16
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeServerError.system("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw FakeServerError.system("bind", errno)
        }
        do {
            port = try FakeServer.localPort(of: fd)
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }
}

enum FakeServerError: Error {
    case system(String, Int32)
}

/// Runs a call that throws `RPCError` and captures its outcome.
func outcome<T>(_ body: () async throws(RPCError) -> T) async -> Result<T, RPCError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
