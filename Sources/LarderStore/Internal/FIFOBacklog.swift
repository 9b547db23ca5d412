/// First in, first out.
struct FIFOBacklog<Job>: JobBacklog {
    private var jobs: [Job] = []
    private var head = 0

    init(capacity: Int = 0) { jobs.reserveCapacity(capacity) }

    var isEmpty: Bool { head == jobs.count }

    /// Jobs not yet taken.
    var count: Int { jobs.count - head }

    mutating func push(_ job: Job) { jobs.append(job) }

    /// The oldest job, or nil when there is none.
    mutating func popFirst() -> Job? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        compact()
        return job
    }

    mutating func take(max: Int, into batch: inout [Job]) {
        let end = min(jobs.count, head + max)
        batch.append(contentsOf: jobs[head..<end])
        head = end
        compact()
    }

    /// Drops what was taken: all of it once empty, else in steps of 4,096 jobs.
    private mutating func compact() {
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: jobs.capacity <= 4096)
            head = 0
        } else if head >= 4096 {
            jobs.removeSubrange(0..<head)
            head = 0
        }
    }
}
