#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on the monotonic clock: cheap (vDSO on Linux), immune to wall-clock changes.
public enum MonotonicClock {
    /// Now, in nanoseconds since an arbitrary start (boot on Linux).
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// `seconds` as nanoseconds (negative and non-finite as 0, at most 10^9 s).
    public static func nanoseconds(seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(min(seconds, 1e9) * 1e9)
    }
}
