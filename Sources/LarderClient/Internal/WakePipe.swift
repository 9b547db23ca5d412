#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem
import LarderWire

/// A self-pipe that wakes a thread blocked in poll(). Portable POSIX (no eventfd).
///
/// Both descriptors stay open until the pipe is deallocated, so `wake()` is
/// safe to call from any thread at any time while it is referenced.
final class WakePipe: Sendable {
    /// Poll this for POLLIN.
    let readFD: Int32
    private let writeFD: Int32

    init() throws(RPCError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw RPCError(.internal, "cannot create the client wake-up pipe: \(Errno.current.message)")
        }
        for fd in fds {
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        SystemCall.close(readFD)
        SystemCall.close(writeFD)
    }

    /// Makes `readFD` readable. A full pipe already wakes the reader, so EAGAIN is fine.
    func wake() {
        var byte: UInt8 = 1
        _ = SystemCall.run { write(writeFD, &byte, 1) }
    }

    /// Empties the pipe after a wake-up.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while case .success(let count) = SystemCall.run({ read(readFD, &buffer, buffer.count) }), count > 0 {}
    }
}
