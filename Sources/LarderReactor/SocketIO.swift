#if canImport(Glibc)
import Glibc
#endif

/// Non-blocking reads and writes on a connected socket.
public enum SocketIO {
    /// What a read or write managed.
    public enum Outcome: Equatable, Sendable {
        /// Moved this many bytes (> 0).
        case transferred(Int)
        /// Nothing now; wait for readiness.
        case wouldBlock
        /// The peer closed its side (read returned 0).
        case endOfStream
    }

    /// Reads up to `buffer.count` bytes.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Outcome {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return .transferred(count) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SystemError("read", errno: errno)
            }
        }
    }

    /// Writes as much of `bytes` as the socket takes now (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE).
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Outcome {
        while true {
            let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return count == 0 ? .wouldBlock : .transferred(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SystemError("send", errno: errno)
            }
        }
    }

    /// Closes a descriptor.
    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// True when the peer has sent bytes not read yet, or closed its side (a peek; never blocks).
    public static func hasUnreadInput(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }
}
