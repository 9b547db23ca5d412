/// The jobs a `JobQueue` holds, and the order it hands them out in. Not thread-safe: the
/// queue calls it with its lock held.
protocol JobBacklog {
    associatedtype Job
    var isEmpty: Bool { get }
    mutating func push(_ job: Job)
    /// Appends up to `max` jobs to `batch`, in the backlog's order.
    mutating func take(max: Int, into batch: inout [Job])
}
