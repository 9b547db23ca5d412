#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with one condition variable; owns both.
///
/// `@unchecked Sendable`: the two pointers never change after `init`, and the
/// pthread objects they point to are what makes sharing them safe.
public final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
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
