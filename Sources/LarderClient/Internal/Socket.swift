#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderWire

/// Blocking TCP socket operations on a raw descriptor, portable POSIX only.
enum Socket {
    /// Connects to `address`, trying every resolved address within `timeout`.
    /// - Returns: a blocking, TCP_NODELAY socket descriptor the caller owns.
    /// - Throws: UNAVAILABLE `cannot connect to HOST:PORT: <reason>`.
    static func connect(to address: ServerAddress, timeout: Duration) throws(RPCError) -> Int32 {
        func unavailable(_ reason: String) -> RPCError {
            RPCError.unavailable("cannot connect to \(address): \(reason)")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? Errno.current.message : String(cString: gai_strerror(status))
            throw unavailable("cannot resolve host \"\(address.host)\": \(reason)")
        }
        defer { freeaddrinfo(first) }

        let deadline = ContinuousClock.now.advanced(by: timeout)
        var lastError = "no address to connect to"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next?.pointee {
            next = info.ai_next
            switch attempt(info, deadline: deadline, timeout: timeout) {
            case .success(let fd): return fd
            case .failure(let reason): lastError = reason.text
            }
        }
        throw unavailable(lastError)
    }

    /// One non-blocking connect with a deadline; the socket is made blocking again on success.
    private static func attempt(_ info: addrinfo, deadline: ContinuousClock.Instant, timeout: Duration)
        -> Result<Int32, AttemptFailureReason>
    {
        let fd: Int32
        switch SystemCall.run({ socket(info.ai_family, info.ai_socktype, info.ai_protocol) }) {
        case .success(let value): fd = value
        case .failure(let error): return .failure(AttemptFailureReason(error.message))
        }
        var keep = false
        defer { if !keep { SystemCall.close(fd) } }

        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) >= 0 else {
            return .failure(AttemptFailureReason(Errno.current.message))
        }
        if systemConnect(fd, info.ai_addr, info.ai_addrlen) != 0 {
            let error = Errno.current
            guard error.code == EINPROGRESS || error.code == EINTR else {
                return .failure(AttemptFailureReason(error.message))
            }
            // Wait until writable: connected or failed.
            while true {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero {
                    return .failure(AttemptFailureReason("timed out after \(formatSeconds(timeout))"))
                }
                var pfd = pollfd(fd: fd, events: Int16(truncatingIfNeeded: POLLOUT), revents: 0)
                let ready = poll(&pfd, 1, Socket.milliseconds(remaining))
                if ready < 0 {
                    let error = Errno.current
                    if error.code == EINTR { continue }
                    return .failure(AttemptFailureReason(error.message))
                }
                if ready > 0 { break }
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0 else {
                return .failure(AttemptFailureReason(Errno.current.message))
            }
            if soError != 0 { return .failure(AttemptFailureReason(Errno(code: soError).message)) }
        }
        guard fcntl(fd, F_SETFL, flags) >= 0 else { return .failure(AttemptFailureReason(Errno.current.message)) }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        keep = true
        return .success(fd)
    }

    /// Writes all of `bytes`, blocking as needed.
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

    /// A `Duration` as poll() milliseconds, rounded up, clamped to Int32.
    static func milliseconds(_ duration: Duration) -> Int32 {
        if duration <= .zero { return 0 }
        let (seconds, attoseconds) = duration.components
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: millis)
    }
}

/// Why one connect attempt failed, as text for the user.
struct AttemptFailureReason: Error {
    let text: String
    init(_ text: String) { self.text = text }
}

/// `1.5 s`, `10 s`, `200 ms`.
func formatSeconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    if millis < 1000 { return "\(millis) ms" }
    if millis % 1000 == 0 { return "\(millis / 1000) s" }
    let tenths = (millis + 50) / 100
    return "\(tenths / 10).\(tenths % 10) s"
}

#if canImport(Glibc)
private func systemConnect(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: socklen_t) -> Int32 {
    Glibc.connect(fd, addr, len)
}
#else
private func systemConnect(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: socklen_t) -> Int32 {
    Darwin.connect(fd, addr, len)
}
#endif
