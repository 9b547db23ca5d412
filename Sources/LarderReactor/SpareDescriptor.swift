#if canImport(Glibc)
import Glibc
#endif

/// One descriptor held in reserve (`/dev/null`) so that a server out of descriptors can still
/// take a pending connection to refuse it: give the spare back, accept, answer, close, and take
/// the spare again. Without it the connection waits in the listen backlog, and its client
/// hangs until its own timeout instead of hearing why. Loop thread only.
public final class SpareDescriptor {
    private var fd: Int32

    /// Opens the spare (or holds none when even that fails).
    public init() {
        fd = Self.open()
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// True while a spare is held.
    public var isHeld: Bool { fd >= 0 }

    /// Takes the spare again if it was lost (another thread took the descriptor it freed).
    public func retake() {
        if fd < 0 { fd = Self.open() }
    }

    /// Runs `body` with the spare's descriptor free for it to use, then takes the spare again
    /// (which fails, leaving none, only when `body` left no descriptor free).
    public func withSpareReleased<R>(_ body: () -> R) -> R {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        defer { fd = Self.open() }
        return body()
    }

    /// A descriptor of `/dev/null`, or -1 when none is free.
    private static func open() -> Int32 { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }
}
