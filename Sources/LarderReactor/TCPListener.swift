import CEpoll
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking listening TCP socket. Owns its descriptor.
public final class TCPListener: Sendable {
    public let fd: Int32
    /// The bound address (with the real port when 0 was asked for).
    public let address: SocketAddress
    private let closed = Atomic<Bool>(false)

    /// Binds and listens on `address` (SO_REUSEADDR, non-blocking, close-on-exec).
    public convenience init(address: SocketAddress, backlog: Int32 = 4096) throws(SystemError) {
        try self.init(binding: address)
        try listen(backlog: backlog)
    }

    /// Binds `address` without listening yet: the address is taken (one another process
    /// listens on fails here), and connections to it are refused until `listen`.
    public init(binding address: SocketAddress) throws(SystemError) {
        let family = address.host.contains(":") ? AF_INET6 : AF_INET
        let fd = try syscall("socket") {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            var on: Int32 = 1
            try syscall("setsockopt(SO_REUSEADDR)") {
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            }
            _ = try address.withSockAddr { pointer, length throws(SystemError) in
                try syscall("bind(\(address))") { bind(fd, pointer, length) }
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { p throws(SystemError) in
                    try syscall("getsockname") { getsockname(fd, p, &length) }
                }
            }
            self.fd = fd
            self.address = SocketAddress(storage: storage)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { close() }

    /// Starts taking connections, up to `backlog` waiting to be accepted.
    public func listen(backlog: Int32 = 4096) throws(SystemError) {
        try syscall("listen") { Glibc.listen(fd, backlog) }
    }

    /// Accepts one pending connection as a non-blocking socket with TCP_NODELAY;
    /// nil when none is pending.
    public func accept() throws(SystemError) -> (fd: Int32, peer: SocketAddress)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        while true {
            let client = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                    accept4(fd, p, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if client >= 0 {
                var on: Int32 = 1
                _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return (client, SocketAddress(storage: storage))
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw SystemError("accept4", errno: errno)
            }
        }
    }

    /// Closes the socket. Idempotent.
    public func close() {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        Glibc.close(fd)
    }
}
