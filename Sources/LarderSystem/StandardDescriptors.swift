#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Descriptors 0, 1 and 2 as the process found them.
public enum StandardDescriptors {
    /// Those of 0, 1 and 2 the process started without (`larder … >&-`). Each is opened on
    /// /dev/null the first time this is read, so that no file or socket opened later takes its
    /// number: text for stdout would otherwise go into whatever did (a connection to the
    /// server). Read it before opening anything else (the executables' first line does).
    public static let closedAtStart: Set<Int32> = {
        var closed: Set<Int32> = []
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closed.insert(fd)
            // open returns the lowest free number, which is this one (those below are open).
            // Another number means another thread took this one meanwhile: leave it be (a dup2
            // would replace whatever that thread opened).
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd { _ = close(opened) }
        }
        return closed
    }()
}
