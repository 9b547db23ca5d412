import LarderWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over POSIX TCP socket calls: connect with a timeout, and
/// read/write that retry on EINTR and report EAGAIN as "nothing now".
enum TCPSocket {
    /// What a read or write did.
    enum Transfer {
        case bytes(Int)
        case wouldBlock
        case closed
        case failed(Int32)
    }

    /// Connects to `address` within `timeoutSeconds`.
    /// - Returns: a TCP_NODELAY socket the caller owns, non-blocking when `nonBlocking`.
    /// - Throws: UNAVAILABLE `cannot connect to HOST:PORT: <reason>`.
    static func connect(to address: BenchAddress, timeoutSeconds: Double, nonBlocking: Bool) throws(RPCError) -> Int32 {
        func unavailable(_ reason: String) -> RPCError {
            .unavailable("cannot connect to \(address): \(reason)")
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
            throw unavailable("cannot resolve \"\(address.host)\": \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        let deadline = MonotonicClock.now() + MonotonicClock.nanoseconds(timeoutSeconds)
        var lastError = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next?.pointee {
            next = info.ai_next
            switch attempt(info, deadline: deadline) {
            case .success(let fd):
                if !nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) }
                return fd
            case .failure(let error): lastError = error.message
            }
        }
        throw unavailable(lastError)
    }

    private static func attempt(_ info: addrinfo, deadline: UInt64) -> Result<Int32, RPCError> {
        let fd = socket(info.ai_family, info.ai_socktype, info.ai_protocol)
        guard fd >= 0 else { return .failure(.unavailable(errnoText(errno))) }
        var keep = false
        defer { if !keep { close(fd) } }
        guard fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) >= 0 else {
            return .failure(.unavailable(errnoText(errno)))
        }
        if systemConnect(fd, info.ai_addr, info.ai_addrlen) != 0 {
            guard errno == EINPROGRESS || errno == EINTR else { return .failure(.unavailable(errnoText(errno))) }
            while true {
                let now = MonotonicClock.now()
                guard now < deadline else { return .failure(.unavailable("timed out")) }
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&pfd, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
                if ready > 0 { break }
                if ready < 0 && errno != EINTR { return .failure(.unavailable(errnoText(errno))) }
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0 else {
                return .failure(.unavailable(errnoText(errno)))
            }
            if soError != 0 { return .failure(.unavailable(errnoText(soError))) }
        }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        keep = true
        return .success(fd)
    }

    /// Reads up to `count` bytes into `buffer`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int) -> Transfer {
        while true {
            let n = recv(fd, buffer, count, 0)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .closed }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(code)
        }
    }

    /// Writes up to `count` bytes from `buffer`.
    static func write(_ fd: Int32, from buffer: UnsafeRawPointer, count: Int) -> Transfer {
        while true {
            let n = send(fd, buffer, count, sendFlags)
            if n >= 0 { return .bytes(n) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(code)
        }
    }

    /// Closes `fd`, ignoring errors (nothing useful can be done about them).
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// `strerror` text for `code`.
    static func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }

    private static var sendFlags: Int32 {
        #if canImport(Glibc)
        Int32(MSG_NOSIGNAL)
        #else
        0
        #endif
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
