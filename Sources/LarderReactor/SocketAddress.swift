#if canImport(Glibc)
import Glibc
#endif
public import LarderSystem

/// An IPv4 or IPv6 address and port, as parsed from "HOST:PORT" or "[V6]:PORT".
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses "127.0.0.1:7411", "localhost:7411" (as 127.0.0.1) or "[::1]:7411"; port 0 means any
    /// free port. The host is not resolved: binding needs a numeric address.
    /// - Throws: `HostPortError` saying what is wrong, e.g. `has no port`, or that the host is a name.
    public init(parsing text: String) throws(HostPortError) {
        let parsed = try HostPort(parsing: text, allowsPortZero: true)
        let host = parsed.host.lowercased() == "localhost" ? "127.0.0.1" : parsed.host
        var probe = in6_addr()
        guard inet_pton(AF_INET, host, &probe) == 1 || inet_pton(AF_INET6, host, &probe) == 1 else {
            throw HostPortError("has the host name \"\(host)\": listening needs an IP address (127.0.0.1, "
                                + "0.0.0.0, [::1], [::]) or localhost")
        }
        self.init(host: host, port: parsed.port)
    }

    /// True for 127.0.0.0/8 and ::1.
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with this address as a `sockaddr` and its length.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> R) throws(SystemError) -> R {
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw SystemError("inet_pton(\(host))", errno: EINVAL) }
            return try withUnsafePointer(to: &address) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { p throws(SystemError) in
                    try body(p, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw SystemError("inet_pton(\(host))", errno: EINVAL) }
        return try withUnsafePointer(to: &address) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { p throws(SystemError) in
                try body(p, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// Reads an address filled in by accept/getsockname.
    init(storage: sockaddr_storage) {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if Int32(storage.ss_family) == AF_INET6 {
            let address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee } }
            var addr = address.sin6_addr
            inet_ntop(AF_INET6, &addr, &buffer, socklen_t(buffer.count))
            self.init(host: buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, port: UInt16(bigEndian: address.sin6_port))
        } else {
            let address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee } }
            var addr = address.sin_addr
            inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
            self.init(host: buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, port: UInt16(bigEndian: address.sin_port))
        }
    }
}
