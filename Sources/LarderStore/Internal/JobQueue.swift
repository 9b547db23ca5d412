import LarderSystem

/// A FIFO of jobs shared by producers and the store threads, guarded by one
/// mutex and condition. Consumers take several jobs per wake-up.
final class JobQueue<Job>: @unchecked Sendable {
    // Sendable because every var below is read and written only with `condition` locked.
    private let condition = ThreadCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var closed = false
    private var waiting = 0
    /// While above zero, pushes do not wake consumers; `release` wakes them once.
    private var holds = 0
    /// While a consumer gathers (see `take(max:gatheringFor:into:)`), the queued jobs
    /// that end its wait; 0 otherwise.
    private var gatherTarget = 0

    /// True while a consumer waits for more jobs to join the ones it has (for tests).
    var isGathering: Bool { condition.withLock { gatherTarget > 0 } }

    init() { jobs.reserveCapacity(1024) }

    /// Appends `job`; false (and the job is not queued) when the queue is closed.
    func push(_ job: Job) -> Bool {
        condition.lock()
        if closed {
            condition.unlock()
            return false
        }
        jobs.append(job)
        let wake = shouldWake
        condition.unlock()
        if wake { condition.signal() }
        return true
    }

    /// Defers waking consumers for jobs pushed until the matching `release()`.
    func hold() {
        condition.lock()
        holds += 1
        condition.unlock()
    }

    /// Ends a `hold()`; wakes the consumers once if jobs were pushed meanwhile.
    func release() {
        condition.lock()
        holds -= 1
        let wake = shouldWake
        condition.unlock()
        if wake { condition.signal() }
    }

    /// With the lock held: whether a waiting consumer has reason to wake.
    private var shouldWake: Bool {
        guard waiting > 0 && holds == 0 else { return false }
        return gatherTarget > 0 ? jobs.count - head >= gatherTarget : head < jobs.count
    }

    /// Waits for work and moves up to `max` jobs into `batch` (which must be empty).
    /// Returns false once the queue is closed and empty.
    func take(max: Int, into batch: inout [Job]) -> Bool {
        take(max: max, gatheringFor: 0, into: &batch)
    }

    /// As `take(max:into:)`, but when the jobs waiting are at least 2 and fewer than
    /// `max`, first waits up to `nanoseconds` for more to make `max` (pushes meanwhile
    /// do not wake it until they do; closing the queue ends the wait). A lone job is
    /// taken at once: only work that arrives together is held for company. For one
    /// consumer at a time.
    func take(max: Int, gatheringFor nanoseconds: UInt64, into batch: inout [Job]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if closed { return false }
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        if nanoseconds > 0 && jobs.count - head >= 2 && jobs.count - head < max && !closed {
            gather(max, for: nanoseconds)
        }
        let end = min(jobs.count, head + max)
        batch.append(contentsOf: jobs[head..<end])
        head = end
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else {
            if head >= 4096 {
                jobs.removeSubrange(0..<head)
                head = 0
            }
            // Others may be waiting for the rest.
            if waiting > 0 { condition.signal() }
        }
        return true
    }

    /// With the lock held: waits until `count` jobs are queued, the queue closes, or
    /// `nanoseconds` passed.
    private func gather(_ count: Int, for nanoseconds: UInt64) {
        let deadline = MonotonicClock.nanoseconds() &+ nanoseconds
        gatherTarget = count
        defer { gatherTarget = 0 }
        while jobs.count - head < count && !closed {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return }
            waiting += 1
            _ = condition.wait(nanoseconds: deadline - now)
            waiting -= 1
        }
    }

    /// Refuses new jobs and wakes every consumer; queued jobs are still taken.
    func close() {
        condition.lock()
        closed = true
        condition.unlock()
        condition.broadcast()
    }
}
