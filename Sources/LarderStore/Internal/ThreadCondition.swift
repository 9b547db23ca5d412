#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with one condition variable; owns both.
final class ThreadCondition: @unchecked Sendable {
    // Sendable because it is a lock: the pthread objects are made for use from any thread,
    // and the pointers to them are immutable.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { precondition(pthread_mutex_lock(mutex) == 0, "pthread_mutex_lock failed") }
    func unlock() { precondition(pthread_mutex_unlock(mutex) == 0, "pthread_mutex_unlock failed") }
    /// Waits for a signal; the caller holds the lock.
    func wait() { precondition(pthread_cond_wait(condition, mutex) == 0, "pthread_cond_wait failed") }
    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Runs `body` holding the lock.
    @inline(__always)
    func withLock<T>(_ body: () -> T) -> T {
        lock()
        defer { unlock() }
        return body()
    }
}
