#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value reached only while holding a pthread mutex: the one lock of the code base.
///
/// Not `Synchronization.Mutex`: on Linux that hands a contended lock over in the kernel
/// (`FUTEX_LOCK_PI`), which ThreadSanitizer cannot see, so it reported the accesses two
/// holders made as a race whenever the lock was contended (docs/FUZZING.md). ThreadSanitizer
/// intercepts `pthread_mutex_lock`, so with this lock every report is about real code. An
/// uncontended lock and unlock costs about as much as `Mutex`'s.
///
/// `@unchecked Sendable`: the value is touched only between `pthread_mutex_lock` and
/// `pthread_mutex_unlock`, and `withLock` takes and gives back values as `sending`, as
/// `Mutex` does, so nothing reachable from the value escapes without a transfer.
public final class LockedValue<Value: ~Copyable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// The value, out of line: reached through the pointer, it is plain memory to
    /// ThreadSanitizer, ordered by the mutex, with no exclusivity bookkeeping of its own.
    private let storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    public init(_ initialValue: consuming sending Value) {
        storage.initialize(to: initialValue)
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the value, holding the lock; another thread calling `withLock`
    /// meanwhile waits. `body` must not call `withLock` on the same value (it would deadlock).
    @inline(__always)
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        precondition(pthread_mutex_lock(mutex) == 0, "pthread_mutex_lock failed")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}
