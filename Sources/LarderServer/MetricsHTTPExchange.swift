import LarderReactor
#if canImport(Glibc)
import Glibc
#endif

/// One connection to the metrics endpoint: its request head, read within a deadline that runs
/// from the accept, then its response, written within another. Non-blocking, so that
/// `MetricsHTTPServer` serves several at once: a client that trickles its head or does not read
/// its response holds one slot until its deadline, never the thread.
///
/// Owns its socket: closed when the exchange is over (`isDone`), or at deinit.
final class MetricsHTTPExchange {
    enum Phase: Equatable {
        case readingHead, writing, done
    }

    let fd: Int32
    private(set) var phase = Phase.readingHead
    /// When the current phase must be over (MonotonicClock nanoseconds).
    private(set) var deadline: UInt64
    private var head: [UInt8] = []
    private var response: [UInt8] = []
    private var written = 0

    var isDone: Bool { phase == .done }
    var wantsWrite: Bool { phase == .writing }

    init(fd: Int32, now: UInt64) {
        self.fd = fd
        deadline = now + MetricsHTTPServer.headTimeoutNanoseconds
    }

    deinit {
        if phase != .done { SocketIO.close(fd) }
    }

    /// Reads what the socket holds. Once the head is complete (or over the size limit, or cut
    /// short by the peer), `respond` turns its request line (nil for none) into the response,
    /// which is written from then on.
    func readable(now: UInt64, respond: (String?) -> [UInt8]) {
        guard phase == .readingHead else { return }
        var chunk = [UInt8](repeating: 0, count: 1024)
        while head.count < MetricsHTTPServer.maxRequestBytes {
            let outcome: SocketIO.Outcome
            do {
                outcome = try chunk.withUnsafeMutableBytes { buffer throws(SystemError) in
                    try SocketIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(
                        buffer.count, MetricsHTTPServer.maxRequestBytes - head.count)]))
                }
            } catch {
                finish()
                return
            }
            switch outcome {
            case .wouldBlock:
                return
            case .endOfStream:
                startResponse(respond(nil), now: now)
                return
            case .transferred(let count):
                let searchFrom = max(0, head.count - 3)
                head += chunk[0..<count]
                if let line = Self.requestLine(of: head, searchingFrom: searchFrom) {
                    startResponse(respond(line), now: now)
                    return
                }
            }
        }
        startResponse(respond(nil), now: now)  // a head of 8 KiB without its end
    }

    /// Writes what the socket takes of the response; the exchange is over once it is all sent.
    func writable() {
        guard phase == .writing else { return }
        while written < response.count {
            let outcome: SocketIO.Outcome
            do {
                outcome = try response.withUnsafeBytes { bytes throws(SystemError) in
                    try SocketIO.write(fd, UnsafeRawBufferPointer(rebasing: bytes[written...]))
                }
            } catch {
                finish()
                return
            }
            guard case .transferred(let count) = outcome else { return }
            written += count
        }
        finish()
    }

    /// The deadline passed: a head not complete gets `408` (if the socket takes it at once), a
    /// response not taken is abandoned.
    func expire() {
        if phase == .readingHead {
            let timeout = Array(("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").utf8)
            _ = timeout.withUnsafeBytes { try? SocketIO.write(fd, $0) }
        }
        finish()
    }

    /// Closes the socket.
    func finish() {
        guard phase != .done else { return }
        phase = .done
        SocketIO.close(fd)
    }

    private func startResponse(_ bytes: [UInt8], now: UInt64) {
        response = bytes
        phase = .writing
        deadline = now + MetricsHTTPServer.responseTimeoutNanoseconds
        writable()
    }

    /// The first line of a head that has ended (CRLF CRLF, or a bare LF LF from a lax client),
    /// without its CR LF; nil while it has not. Only the bytes from `start` are searched for the end.
    static func requestLine(of bytes: [UInt8], searchingFrom start: Int) -> String? {
        for index in max(start, 1)..<max(bytes.count, 1) where bytes[index] == 0x0A {
            if bytes[index - 1] == 0x0A || (index >= 3 && bytes[(index - 3)...index].elementsEqual([13, 10, 13, 10])) {
                var line = bytes.prefix { $0 != 0x0A }
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
        }
        return nil
    }
}
