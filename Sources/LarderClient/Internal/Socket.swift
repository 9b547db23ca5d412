#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem
import LarderWire

/// Blocking TCP socket operations on a raw descriptor, portable POSIX only.
enum Socket {
    /// Connects to `address`, trying every resolved address within `timeout`.
    /// - Returns: a blocking, TCP_NODELAY socket descriptor the caller owns.
    /// - Throws: UNAVAILABLE `cannot connect to HOST:PORT: <reason>`.
    static func connect(to address: ServerAddress, timeout: Duration) throws(RPCError) -> Int32 {
        let (seconds, attoseconds) = max(timeout, .zero).components
        let nanoseconds = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let timeoutNanoseconds = nanoseconds.overflow ? UInt64.max / 2
            : min(nanoseconds.partialValue &+ UInt64(attoseconds / 1_000_000_000), UInt64.max / 2)
        switch TCPConnector.connect(to: HostPort(host: address.host, port: address.port),
                                    timeoutNanoseconds: timeoutNanoseconds) {
        case .success(let fd): return fd
        case .failure(let failure): throw RPCError.unavailable("cannot connect to \(address): \(failure)")
        }
    }

    /// Writes all of `bytes`, blocking as needed (the TLS handshake, on the connecting thread).
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Result<Void, Errno> {
        bytes.withUnsafeBytes { raw -> Result<Void, Errno> in
            guard let base = raw.baseAddress else { return .success(()) }
            var offset = 0
            while offset < raw.count {
                let result = SystemCall.run { send(fd, base + offset, raw.count - offset, sendFlags) }
                switch result {
                case .success(let written): offset += written
                case .failure(let error): return .failure(error)
                }
            }
            return .success(())
        }
    }

    /// What one `sendSome` did.
    enum SendOutcome {
        case sent(Int)
        /// The socket's buffer is full: poll for POLLOUT.
        case wouldBlock
        case failed(Errno)
    }

    /// Writes as much of `bytes` as the socket takes now, without blocking.
    static func sendSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SendOutcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .sent(0) }
        switch SystemCall.run({ send(fd, base, bytes.count, sendFlags | Int32(MSG_DONTWAIT)) }) {
        case .success(let written): return .sent(written)
        case .failure(let error) where error.code == EAGAIN || error.code == EWOULDBLOCK: return .wouldBlock
        case .failure(let error): return .failed(error)
        }
    }

    /// `send` flags: no SIGPIPE on Linux (Darwin uses SO_NOSIGPIPE instead).
    private static var sendFlags: Int32 {
        #if canImport(Glibc)
        Int32(MSG_NOSIGNAL)
        #else
        0
        #endif
    }

    /// Whether the peer has closed or reset the connection, checked without blocking or consuming data.
    static func peerHasClosed(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(truncatingIfNeeded: POLLIN), revents: 0)
        guard poll(&pfd, 1, 0) > 0 else { return false }
        if Int32(pfd.revents) & (Int32(POLLHUP) | Int32(POLLERR) | Int32(POLLNVAL)) != 0 { return true }
        var byte: UInt8 = 0
        let peeked = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// Shuts both directions down, waking any thread blocked on the socket.
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// A `Duration` as poll() milliseconds, rounded up, clamped to Int32 (a longer one, up to
    /// `Duration`'s largest, waits ~24.8 days and is not an overflow).
    static func milliseconds(_ duration: Duration) -> Int32 {
        if duration <= .zero { return 0 }
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64(Int32.max) / 1000 else { return Int32.max }
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: millis)
    }
}

/// `1.5 s`, `10 s`, `200 ms`.
func formatSeconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let (wholeMillis, overflow) = seconds.multipliedReportingOverflow(by: 1000)
    guard !overflow else { return "\(seconds) s" }
    let millis = wholeMillis + attoseconds / 1_000_000_000_000_000
    if millis < 1000 { return "\(millis) ms" }
    if millis % 1000 == 0 { return "\(millis / 1000) s" }
    let tenths = (millis + 50) / 100
    return "\(tenths / 10).\(tenths % 10) s"
}
