#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits for socket readiness with microsecond timeouts, for the sub-millisecond
/// gaps of an open-loop schedule that poll()'s millisecond timeout cannot express.
/// Uses select(), so only descriptors below FD_SETSIZE qualify.
enum PreciseWait {
    /// Whether every descriptor in `fds` fits in an fd_set.
    static func supports(_ fds: [pollfd]) -> Bool {
        fds.allSatisfy { $0.fd < Int32(MemoryLayout<fd_set>.size * 8) }
    }

    /// Waits up to `microseconds` for the events asked in `fds` and fills their `revents`.
    /// - Returns: the number of ready descriptors, or -1 with errno set.
    static func wait(_ fds: inout [pollfd], microseconds: Int) -> Int32 {
        var readable = fd_set()
        var writable = fd_set()
        var highest: Int32 = -1
        for entry in fds where entry.fd >= 0 {
            set(entry.fd, in: &readable)
            if Int32(entry.events) & Int32(POLLOUT) != 0 { set(entry.fd, in: &writable) }
            highest = max(highest, entry.fd)
        }
        var timeout = timeval(tv_sec: 0, tv_usec: .init(microseconds))
        let ready = select(highest + 1, &readable, &writable, nil, &timeout)
        guard ready > 0 else { return ready }
        var count: Int32 = 0
        for index in fds.indices where fds[index].fd >= 0 {
            var events: Int32 = 0
            if isSet(fds[index].fd, in: &readable) { events |= Int32(POLLIN) }
            if isSet(fds[index].fd, in: &writable) { events |= Int32(POLLOUT) }
            fds[index].revents = Int16(events)
            if events != 0 { count += 1 }
        }
        return count
    }

    private static func set(_ fd: Int32, in set: inout fd_set) {
        withUnsafeMutableBytes(of: &set) { raw in
            let words = raw.bindMemory(to: UInt.self)
            words[Int(fd) / UInt.bitWidth] |= 1 << UInt(Int(fd) % UInt.bitWidth)
        }
    }

    private static func isSet(_ fd: Int32, in set: inout fd_set) -> Bool {
        withUnsafeMutableBytes(of: &set) { raw in
            let words = raw.bindMemory(to: UInt.self)
            return words[Int(fd) / UInt.bitWidth] & (1 << UInt(Int(fd) % UInt.bitWidth)) != 0
        }
    }
}
