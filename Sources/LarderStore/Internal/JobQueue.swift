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

    init() { jobs.reserveCapacity(1024) }

    /// Appends `job`; false (and the job is not queued) when the queue is closed.
    func push(_ job: Job) -> Bool {
        condition.lock()
        if closed {
            condition.unlock()
            return false
        }
        jobs.append(job)
        let wake = waiting > 0 && holds == 0
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
        let wake = holds == 0 && waiting > 0 && head < jobs.count
        condition.unlock()
        if wake { condition.signal() }
    }

    /// Waits for work and moves up to `max` jobs into `batch` (which must be empty).
    /// Returns false once the queue is closed and empty.
    func take(max: Int, into batch: inout [Job]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if closed { return false }
            waiting += 1
            condition.wait()
            waiting -= 1
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

    /// Refuses new jobs and wakes every consumer; queued jobs are still taken.
    func close() {
        condition.lock()
        closed = true
        condition.unlock()
        condition.broadcast()
    }
}
