import Foundation
public import LarderWire

/// A plain blocking TCP socket for speaking raw bytes to the server: garbage,
/// truncated frames, hand-built envelopes.
public final class RawConnection: @unchecked Sendable {  // receive() from one task, send() from another at most
    public let fd: Int32
    private var decoder = FrameDecoder(maxFrameSize: 64 * 1024 * 1024)

    /// Connects to 127.0.0.1:`port`; `receiveBufferBytes` shrinks the socket's receive
    /// buffer (set before connecting, so the window stays small), for a peer that must
    /// leave replies in the server rather than in its own kernel buffer.
    public init(port: UInt16, receiveBufferBytes: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw RPCError.unavailable("connect failed: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Makes the close (at deinit) a reset (RST), as a process that dies does, not a FIN the
    /// server may take for a half-close.
    public func resetOnClose() {
        var noLinger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &noLinger, socklen_t(MemoryLayout<linger>.size))
    }

    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// recv(2) into `buffer`: the byte count, 0 at end of stream, -1 after the 10 s receive
    /// timeout or an error (`errno` says which). Retried when a signal interrupts it: with
    /// SO_RCVTIMEO set, recv fails with EINTR instead of restarting (signal(7)), and this test
    /// process takes SIGCHLD whenever a server another test started exits.
    public func receiveSome(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 || errno != EINTR || Date() >= deadline { return count }
        }
    }

    /// Sends as much of `bytes` as the server takes within `seconds`, without
    /// blocking; returns the number of bytes sent.
    public func sendWithoutBlocking(_ bytes: [UInt8], seconds: Double) -> Int {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        var offset = 0
        let deadline = Date().addingTimeInterval(seconds)
        while offset < bytes.count && Date() < deadline {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent > 0 { offset += sent } else { usleep(5_000) }
        }
        return offset
    }

    /// Shuts down the sending side (the server reads end of stream); replies still arrive.
    public func shutdownSending() { _ = shutdown(fd, Int32(SHUT_WR)) }

    /// Sends one framed request envelope.
    public func send(_ envelope: RequestEnvelope) { send(Frame.encode(envelope)) }

    /// The next reply, or nil at end of stream, an error, or when none came within `seconds`
    /// (a bound for a reply that never comes, long enough for a server under TSan on a busy
    /// machine; each read waits 10 s at most, and silence is waited out until the bound).
    public func receive(within seconds: Double = 60) -> ResponseEnvelope? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let body = try? decoder.next() {
                return try? ProtoCodec.decode(ResponseEnvelope.self, from: body)
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { receiveSome(into: $0, within: deadline.timeIntervalSinceNow) }
            if count <= 0 { return nil }
            decoder.append(Array(buffer[0..<count]))
        }
    }

    /// `receiveSome(into:)` waiting out receive timeouts until `seconds` pass: the byte count,
    /// 0 at end of stream, -1 after `seconds` of silence or on an error. For an answer that
    /// must come, whose absence after one 10 s receive timeout is only a busy machine.
    public func receiveSome(into buffer: UnsafeMutableRawBufferPointer, within seconds: Double) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let count = receiveSome(into: buffer)
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Date() < deadline { continue }
            return count
        }
    }

    /// True when the server closed the connection (reads hit end of stream, or a reset) within
    /// `seconds`: a bound for a close that never comes, long enough for a server under TSan on a
    /// busy machine, whose timeouts (frame, write stall) fire on its own late ticks.
    public func isClosedByServer(within seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { receiveSome(into: $0, within: deadline.timeIntervalSinceNow) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }
}
