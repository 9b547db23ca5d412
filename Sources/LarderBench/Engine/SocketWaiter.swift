#if canImport(CEpoll)
import CEpoll
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits until some of a loop's connections are readable or writable.
///
/// On Linux it uses epoll, so a turn costs the same with 1,000 connections as
/// with 4; elsewhere poll(). Waits shorter than a millisecond go through
/// select() on the epoll descriptor (or on the sockets), which counts in
/// microseconds, for the gaps of an open-loop schedule.
final class SocketWaiter {
    /// A connection that is ready: its index and what it is ready for.
    struct Ready {
        var index: Int
        var readable: Bool
        var writable: Bool
    }

    /// The ready connections after `wait`.
    private(set) var ready: [Ready] = []
    private let fds: [Int32]
    private var wantsWritable: [Bool]
    #if canImport(CEpoll)
    private let epollFD: Int32
    private var events: [epoll_event]
    #else
    private var pollFDs: [pollfd]
    #endif

    init(fds: [Int32]) {
        self.fds = fds
        wantsWritable = [Bool](repeating: false, count: fds.count)
        ready.reserveCapacity(fds.count)
        #if canImport(CEpoll)
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1 failed: \(TCPSocket.errnoText(errno))")
        events = [epoll_event](repeating: epoll_event(), count: max(1, fds.count))
        for (index, fd) in fds.enumerated() {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
        }
        #else
        pollFDs = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        #endif
    }

    deinit {
        #if canImport(CEpoll)
        TCPSocket.close(epollFD)
        #endif
    }

    /// Asks (or stops asking) to be woken when connection `index` can take more output.
    func setWantsWritable(_ index: Int, _ wanted: Bool) {
        guard wantsWritable[index] != wanted else { return }
        wantsWritable[index] = wanted
        #if canImport(CEpoll)
        var event = epoll_event()
        event.events = wanted ? (EPOLLIN.rawValue | EPOLLOUT.rawValue) : EPOLLIN.rawValue
        event.data.u64 = UInt64(index)
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, fds[index], &event)
        #else
        pollFDs[index].events = Int16(wanted ? (POLLIN | POLLOUT) : POLLIN)
        #endif
    }

    /// Stops watching connection `index` (before its socket is closed).
    func remove(_ index: Int) {
        #if canImport(CEpoll)
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fds[index], nil)
        #else
        pollFDs[index].fd = -1
        #endif
    }

    /// Waits up to `nanoseconds` and fills `ready`.
    /// - Returns: false when waiting failed (errno is set); EINTR counts as a wake-up with nothing ready.
    func wait(nanoseconds: UInt64) -> Bool {
        ready.removeAll(keepingCapacity: true)
        #if canImport(CEpoll)
        var timeout = Int32(min(nanoseconds / 1_000_000, 60_000))
        if nanoseconds > 0 && timeout == 0 {
            // Sub-millisecond: select() on the epoll descriptor, then collect without blocking.
            guard Self.selectReadable(epollFD, microseconds: Int(max(1, nanoseconds / 1000))) else { return true }
            timeout = 0
        }
        let count = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeout)
        }
        if count < 0 { return errno == EINTR }
        for position in 0..<Int(count) {
            let event = events[position]
            let flags = event.events
            ready.append(Ready(
                index: Int(event.data.u64),
                readable: flags & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0,
                writable: flags & EPOLLOUT.rawValue != 0))
        }
        return true
        #else
        let count: Int32
        if nanoseconds > 0 && nanoseconds < 1_000_000 && PreciseWait.supports(pollFDs) {
            count = PreciseWait.wait(&pollFDs, microseconds: Int(max(1, nanoseconds / 1000)))
        } else {
            count = poll(&pollFDs, nfds_t(pollFDs.count), Int32(min(nanoseconds / 1_000_000, 60_000)))
        }
        if count < 0 { return errno == EINTR }
        guard count > 0 else { return true }
        for index in pollFDs.indices where pollFDs[index].revents != 0 {
            let flags = Int32(pollFDs[index].revents)
            ready.append(Ready(index: index, readable: flags & Int32(POLLIN | POLLHUP | POLLERR) != 0,
                               writable: flags & Int32(POLLOUT) != 0))
            pollFDs[index].revents = 0
        }
        return true
        #endif
    }

    #if canImport(CEpoll)
    /// Whether `fd` became readable within `microseconds` (select(); false for fds beyond FD_SETSIZE).
    private static func selectReadable(_ fd: Int32, microseconds: Int) -> Bool {
        var probe = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        guard PreciseWait.supports(probe) else { return true }
        return PreciseWait.wait(&probe, microseconds: microseconds) > 0
    }
    #endif
}
