#if canImport(Glibc)
import Glibc
#endif
import LarderSystem

/// Closing sockets without losing what was last written to them. Closing a socket whose peer
/// sent bytes it never read makes the kernel answer with a reset, and a peer that gets the reset
/// may discard what it had received but not yet read: a server's last reply, or HTTP/2's final
/// GOAWAY. So the sending side is shut down first (the peer reads everything, then end of
/// stream), and what the peer still sends is read and dropped until it closes its side too.
public enum LingeringClose {
    /// Shuts down the sending side of each socket, then reads and drops what its peer sends
    /// until the peer closes, a read fails, `maxBytesPerSocket` were read, or `milliseconds`
    /// pass for all of them together. The descriptors stay open: the caller closes them.
    /// Returns how many sockets were still not done when the time ran out.
    @discardableResult
    public static func drain(_ fds: [Int32], milliseconds: Int, maxBytesPerSocket: Int = 1 << 20) -> Int {
        guard !fds.isEmpty else { return 0 }
        for fd in fds { _ = shutdown(fd, Int32(SHUT_WR)) }
        // `pending[i]` and `readSoFar[i]` are one socket's: removed together once it is done.
        var pending = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var readSoFar = [Int](repeating: 0, count: fds.count)
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = MonotonicClock.nanoseconds() + UInt64(max(milliseconds, 0)) * 1_000_000
        while !pending.isEmpty {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return pending.count }
            let ready = poll(&pending, nfds_t(pending.count), Int32(clamping: (deadline - now + 999_999) / 1_000_000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return pending.count }
            for index in pending.indices.reversed() where pending[index].revents != 0 {
                pending[index].revents = 0
                if discardAvailable(pending[index].fd, scratch: &scratch, read: &readSoFar[index], limit: maxBytesPerSocket) {
                    pending.remove(at: index)
                    readSoFar.remove(at: index)
                }
            }
        }
        return 0
    }

    /// Reads and drops what `fd` has now; true when the socket is done (end of stream, an
    /// error, or `limit` bytes read in all).
    private static func discardAvailable(_ fd: Int32, scratch: inout [UInt8], read: inout Int, limit: Int) -> Bool {
        while true {
            let outcome: SocketIO.Outcome
            do {
                outcome = try scratch.withUnsafeMutableBytes { buffer throws(SystemError) in
                    try SocketIO.read(fd, into: buffer)
                }
            } catch {
                return true
            }
            switch outcome {
            case .transferred(let count):
                read += count
                if read >= limit { return true }
            case .wouldBlock:
                return false
            case .endOfStream:
                return true
            }
        }
    }
}
