#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with one condition variable; owns both. Timed waits use the
/// monotonic clock (on Linux; Darwin waits relative to now), so a wall-clock change
/// neither shortens nor stretches them.
///
/// `@unchecked Sendable`: the two pointers never change after `init`, and the
/// pthread objects they point to are what makes sharing them safe.
public final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        #if os(Linux)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        defer { pthread_condattr_destroy(&attributes) }
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        #else
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
        #endif
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { precondition(pthread_mutex_lock(mutex) == 0, "pthread_mutex_lock failed") }
    public func unlock() { precondition(pthread_mutex_unlock(mutex) == 0, "pthread_mutex_unlock failed") }
    /// Waits for a signal; the caller holds the lock.
    public func wait() { precondition(pthread_cond_wait(condition, mutex) == 0, "pthread_cond_wait failed") }
    /// Waits for a signal for at most `nanoseconds`; the caller holds the lock. Returns false
    /// when the time ran out. A spurious wake-up returns true: callers re-check their state.
    public func wait(nanoseconds: UInt64) -> Bool {
        let bounded = min(nanoseconds, 1_000_000_000 * 1_000_000_000)
        #if os(Linux)
        let deadline = MonotonicClock.nanoseconds() &+ bounded
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
        #else
        var time = timespec(tv_sec: Int(bounded / 1_000_000_000), tv_nsec: Int(bounded % 1_000_000_000))
        return pthread_cond_timedwait_relative_np(condition, mutex, &time) != ETIMEDOUT
        #endif
    }
    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Runs `body` holding the lock.
    @inline(__always)
    public func withLock<T>(_ body: () -> T) -> T {
        lock()
        defer { unlock() }
        return body()
    }
}
