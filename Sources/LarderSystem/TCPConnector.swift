#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connecting a TCP socket to a host name or address, with a timeout: the
/// client's and the bench's dialling, portable POSIX (getaddrinfo + poll).
public enum TCPConnector {
    /// Why a connect failed, as text for the user.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The host did not resolve.
        case resolve(host: String, reason: String)
        /// Every resolved address refused, failed or timed out; the last reason.
        case connect(reason: String)

        /// `cannot resolve host "h": reason`, or the connect failure's reason.
        public var description: String {
            switch self {
            case .resolve(let host, let reason): "cannot resolve host \"\(host)\": \(reason)"
            case .connect(let reason): reason
            }
        }
    }

    /// Connects to `address`, trying every resolved address until `timeoutNanoseconds` have passed.
    /// - Returns: a blocking, TCP_NODELAY socket descriptor the caller owns (no SIGPIPE on Darwin).
    public static func connect(to address: HostPort, timeoutNanoseconds: UInt64) -> Result<Int32, Failure> {
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
            return .failure(.resolve(host: address.host, reason: reason))
        }
        defer { freeaddrinfo(first) }

        let deadline = MonotonicClock.nanoseconds() &+ timeoutNanoseconds
        var lastError = "no address to connect to"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next?.pointee {
            next = info.ai_next
            switch attempt(info, deadline: deadline, timeoutNanoseconds: timeoutNanoseconds) {
            case .success(let fd): return .success(fd)
            case .failure(let reason): lastError = reason.description
            }
        }
        return .failure(.connect(reason: lastError))
    }

    /// One non-blocking connect with a deadline; the socket is made blocking again on success.
    private static func attempt(_ info: addrinfo, deadline: UInt64, timeoutNanoseconds: UInt64) -> Result<Int32, Failure> {
        func failed(_ reason: String) -> Result<Int32, Failure> { .failure(.connect(reason: reason)) }
        let fd: Int32
        switch SystemCall.run({ socket(info.ai_family, info.ai_socktype, info.ai_protocol) }) {
        case .success(let value): fd = value
        case .failure(let error): return failed(error.message)
        }
        var keep = false
        defer { if !keep { SystemCall.close(fd) } }

        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) >= 0 else { return failed(Errno.current.message) }
        if systemConnect(fd, info.ai_addr, info.ai_addrlen) != 0 {
            let error = Errno.current
            guard error.code == EINPROGRESS || error.code == EINTR else { return failed(error.message) }
            // Wait until writable: connected or failed.
            while true {
                let now = MonotonicClock.nanoseconds()
                guard now < deadline else { return failed("timed out after \(formatNanoseconds(timeoutNanoseconds))") }
                var pfd = pollfd(fd: fd, events: Int16(truncatingIfNeeded: POLLOUT), revents: 0)
                let ready = poll(&pfd, 1, Int32(min((deadline - now + 999_999) / 1_000_000, 60_000)))
                if ready < 0 {
                    let error = Errno.current
                    if error.code == EINTR { continue }
                    return failed(error.message)
                }
                if ready > 0 { break }
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0 else { return failed(Errno.current.message) }
            if soError != 0 { return failed(Errno(code: soError).message) }
        }
        guard fcntl(fd, F_SETFL, flags) >= 0 else { return failed(Errno.current.message) }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        keep = true
        return .success(fd)
    }

    /// `1.5 s`, `10 s`, `200 ms`.
    static func formatNanoseconds(_ nanoseconds: UInt64) -> String {
        let millis = nanoseconds / 1_000_000
        if millis < 1000 { return "\(millis) ms" }
        if millis % 1000 == 0 { return "\(millis / 1000) s" }
        let tenths = (millis + 50) / 100
        return "\(tenths / 10).\(tenths % 10) s"
    }
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
