import LarderSystem

/// Jobs shared by producers and the store threads, guarded by one mutex and condition,
/// handed out in the order `Backlog` keeps. Consumers take several jobs per wake-up.
final class JobQueue<Backlog: JobBacklog>: @unchecked Sendable {
    typealias Job = Backlog.Job
    // Sendable because every var below is read and written only with `condition` locked.
    private let condition = ThreadCondition()
    private var backlog: Backlog
    private var closed = false
    private var waiting = 0
    /// While above zero, pushes do not wake consumers; `release` wakes them once.
    private var holds = 0

    init(_ backlog: Backlog) { self.backlog = backlog }

    /// Appends `job`; false (and the job is not queued) when the queue is closed.
    func push(_ job: Job) -> Bool {
        condition.lock()
        if closed {
            condition.unlock()
            return false
        }
        backlog.push(job)
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
        let wake = holds == 0 && waiting > 0 && !backlog.isEmpty
        condition.unlock()
        if wake { condition.signal() }
    }

    /// Waits for work and moves up to `max` jobs into `batch` (which must be empty).
    /// Returns false once the queue is closed and empty.
    func take(max: Int, into batch: inout [Job]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while backlog.isEmpty {
            if closed { return false }
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        backlog.take(max: max, into: &batch)
        // Others may be waiting for the rest.
        if !backlog.isEmpty && waiting > 0 { condition.signal() }
        return true
    }

    /// As `take(max:into:)`, but waits at most `nanoseconds` (nil: as long as it takes) and
    /// then returns true with `batch` left empty.
    func take(max: Int, into batch: inout [Job], waitingAtMost nanoseconds: UInt64?) -> Bool {
        guard let nanoseconds else { return take(max: max, into: &batch) }
        condition.lock()
        defer { condition.unlock() }
        let deadline = MonotonicClock.nanoseconds() &+ nanoseconds
        while backlog.isEmpty {
            if closed { return false }
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return true }
            waiting += 1
            _ = condition.wait(nanoseconds: deadline - now)
            waiting -= 1
        }
        backlog.take(max: max, into: &batch)
        if !backlog.isEmpty && waiting > 0 { condition.signal() }
        return true
    }

    /// Refuses new jobs and wakes every consumer; returns the jobs still queued, which no
    /// consumer will take (the caller completes them).
    func close() -> [Job] {
        condition.lock()
        closed = true
        var left: [Job] = []
        while !backlog.isEmpty { backlog.take(max: Int.max, into: &left) }
        condition.unlock()
        condition.broadcast()
        return left
    }
}
