#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole writes to a descriptor the process was given (its standard output or error).
public enum DescriptorWriter {
    /// Writes all of `bytes` to `fd`: retries after EINTR, waits for a descriptor left
    /// non-blocking to take more (up to `waitMilliseconds` each time; -1: for as long as it
    /// takes), stops at the first other failure.
    /// - Returns: nil when everything was written, else why not (ENOSPC, EBADF, EPIPE, …;
    ///   EAGAIN when a wait ran out).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, waitMilliseconds: Int32 = -1) -> Errno? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            switch SystemCall.run({ systemWrite(fd, base + offset, bytes.count - offset) }) {
            case .success(let written) where written > 0:
                offset += written
            case .success:
                return Errno(code: EIO)  // wrote nothing without saying why
            case .failure(let error) where error.code == EAGAIN || error.code == EWOULDBLOCK:
                var waiter = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&waiter, 1, waitMilliseconds) == 0 { return error }
            case .failure(let error):
                return error
            }
        }
        return nil
    }

    /// `writeAll` of a string's UTF-8.
    public static func writeAll(_ fd: Int32, _ text: String, waitMilliseconds: Int32 = -1) -> Errno? {
        var text = text
        return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0), waitMilliseconds: waitMilliseconds) }
    }

    private static func systemWrite(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, pointer, count)
        #else
        Darwin.write(fd, pointer, count)
        #endif
    }
}
