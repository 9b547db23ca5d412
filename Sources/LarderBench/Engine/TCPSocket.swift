import LarderSystem
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
        switch TCPConnector.connect(to: HostPort(host: address.host, port: address.port),
                                    timeoutNanoseconds: MonotonicClock.nanoseconds(seconds: timeoutSeconds)) {
        case .success(let fd):
            if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            return fd
        case .failure(let failure):
            throw .unavailable("cannot connect to \(address): \(failure)")
        }
    }

    /// Makes `fd` blocking again (after a non-blocking TLS handshake).
    static func setBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
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
