import Foundation

/// Runs blocking work (waiting for a child process, reading its pipes) on a thread of
/// its own and resumes the caller when it is done.
///
/// Swift's cooperative pool has one thread per core, two here, and every test of the
/// run shares it: a test that blocks one of them (a `waitUntilExit`, a semaphore, a
/// `usleep` loop) stalls every other test's tasks for that long. On a busy machine
/// such stalls added up to the 10–30 s bounds of unrelated tests, which then failed.
/// Suites that block in many places run whole on threads of their own instead (the
/// `.offThePool` trait, `BlockingWorkExecutor`).
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// `offThePool` for work that cannot fail.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.start()
    }
}
