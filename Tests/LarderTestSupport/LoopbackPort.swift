import Foundation

/// A TCP socket bound to 127.0.0.1 on `port` (0: a free one), listening with `backlog` when
/// one is given; the caller closes it.
public func boundLoopbackSocket(port: UInt16 = 0, listening backlog: Int32? = nil) throws -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SupportError("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            guard bind(fd, pointer, length) == 0 else { return false }
            if let backlog, listen(fd, backlog) != 0 { return false }
            return getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else {
        let code = errno
        close(fd)
        throw SupportError("cannot \(backlog == nil ? "bind to" : "listen on") 127.0.0.1:\(port): errno \(code)")
    }
    return (fd, UInt16(bigEndian: address.sin_port))
}

/// A loopback port nothing listens on, free a moment ago (so a server can be started, or
/// restarted, on it, and a client pointed at it finds nobody). Taken below the kernel's
/// ephemeral range (`ip_local_port_range`): a port from that range, closed, can be given to
/// any parallel test's next client socket before a server restarts on it.
public func unusedLoopbackPort() throws -> UInt16 {
    let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
        .split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
    let low = max(1024, range - 10_000)
    for _ in 0..<(range - low >= 1000 ? 200 : 0) {  // none when the range starts too low to leave room
        let port = UInt16(Int.random(in: low..<range))
        if let (fd, _) = try? boundLoopbackSocket(port: port) {
            close(fd)
            return port
        }
    }
    let (fd, port) = try boundLoopbackSocket()
    close(fd)
    return port
}

/// A failure of a test helper itself (not of the code under test).
public struct SupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
