import Foundation
import LarderSystem

/// A task executor whose jobs run on threads of its own, and which starts another thread
/// whenever more jobs wait than it has threads waiting for one (up to `maxThreads`).
///
/// Swift's cooperative pool has one thread per core, two here, shared by every test of the
/// run. The end-to-end tests block their thread in places (a socket read with a timeout, a
/// server's exit, a `usleep` loop), and while two of them do, every other test's tasks wait,
/// however idle the CPU: on a busy machine such stalls added up to the bounds of unrelated
/// tests. A test body on this executor (see `Trait.offThePool`) blocks one of its threads,
/// not one of the pool's two.
///
/// Jobs run in the order they came. A job must never block its thread on something another
/// job of this executor has to do (a semaphore a `Task(executorPreference:)` signals, say):
/// with every thread so blocked, that job would wait for one of their timeouts.
///
/// `@unchecked Sendable`: its state is guarded by `condition`.
public final class BlockingWorkExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor the `.offThePool` trait runs tests on. Sixteen threads: enough that tests
    /// blocked for a while hold up no other, few enough that the tests running at once stay
    /// near what two cores serve (with 256, the ThreadSanitizer run took longer, its servers
    /// crowding each other).
    public static let shared = BlockingWorkExecutor(maxThreads: 16)

    private let maxThreads: Int
    private let condition = NSCondition()
    /// Guarded by `condition`: the jobs not yet taken are `jobs[next...]`.
    private var jobs: [UnownedJob] = []
    private var next = 0
    private var threads = 0
    /// Workers waiting for a job (guarded by `condition`).
    private var waiting = 0

    /// An executor that starts at most `maxThreads` threads; jobs past that wait for a free one.
    public init(maxThreads: Int) {
        self.maxThreads = maxThreads
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // More jobs waiting than workers to take them: the others are busy, perhaps blocked.
        let startThread = jobs.count - next > waiting && threads < maxThreads
        if startThread { threads += 1 }
        if waiting > 0 { condition.signal() }
        condition.unlock()
        if startThread {
            _ = SystemThread(name: "larder-test-wk") { [self] in work() }
        }
    }

    /// A worker: runs jobs as they come, and waits for the next one when there is none.
    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while next == jobs.count {
                waiting += 1
                condition.wait()
                waiting -= 1
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            } else if next >= 1024 && next * 2 >= jobs.count {  // never drained: taken jobs dropped
                jobs.removeFirst(next)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
