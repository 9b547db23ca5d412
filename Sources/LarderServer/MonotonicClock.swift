#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the monotonic clock: cheap, and immune to wall-clock changes.
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
