import Foundation
public import LarderMemoryStore
public import LarderStore
import LarderWire

/// A `Store` over a `MemoryStore`, for running the real server in a test process
/// with no database: every read and write runs on one store thread of its own,
/// in submission order, and a failed write leaves no trace (its snapshot is put back).
///
/// A test can hold the store thread (`hold()`) to keep calls in flight, see how
/// many operations reached the store (`submittedCount`), and let them go (`release()`).
public final class InMemoryStore: Store, @unchecked Sendable {
    // Checked by hand: every var below is read and written only with `condition` locked,
    // and `memory` only on the store thread.
    private let condition = NSCondition()
    private var jobs: [@Sendable (MemoryStore) -> Void] = []
    private var held = false
    private var closed = false
    private var finished = false
    private var submitted = 0
    private var delivered: @Sendable () -> Void = {}
    private let memory: MemoryStore

    /// Starts the store thread over `memory` (by default the fuzz targets' seeded rows:
    /// one location, two category groups, one item category, three meals).
    public init(_ memory: MemoryStore = .seeded()) {
        self.memory = memory
        let thread = Thread { [self] in runJobs() }
        thread.name = "in-memory-store"
        thread.start()
    }

    /// Operations submitted so far (run, running or waiting).
    public var submittedCount: Int { locked { submitted } }

    /// Stops the store thread before its next operation, until `release()`:
    /// the calls that reach the store meanwhile stay in flight.
    public func hold() { locked { held = true } }

    /// Lets a held store thread go on.
    public func release() {
        locked { held = false }
        condition.broadcast()
    }

    public func submit(_ read: StoreRead, cost: ReadCost) {
        enqueue(fail: read.fail) { memory in read.run(on: memory) }
    }

    public func submit(_ write: StoreWrite) {
        enqueue(fail: write.refuse) { memory in
            let snapshot = memory.copy()
            if !write.run(on: memory) { memory.restore(from: snapshot) }
            write.complete()
        }
    }

    public func setCompletionsDelivered(_ body: @escaping @Sendable () -> Void) {
        locked { delivered = body }
    }

    /// Runs the operations already submitted (a held store is released), then stops the thread.
    public func close() {
        locked {
            closed = true
            held = false
        }
        condition.broadcast()
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// Queues `job` for the store thread, or calls `fail` once the store is closed.
    private func enqueue(fail: @escaping @Sendable (RPCError) -> Void,
                         _ job: @escaping @Sendable (MemoryStore) -> Void) {
        let accepted = locked { () -> Bool in
            guard !closed else { return false }
            submitted += 1
            jobs.append(job)
            return true
        }
        if accepted {
            condition.broadcast()
        } else {
            fail(.unavailable("the store is closed"))
            locked { delivered }()
        }
    }

    private func runJobs() {
        while true {
            condition.lock()
            while (jobs.isEmpty || held) && !(closed && jobs.isEmpty) { condition.wait() }
            if jobs.isEmpty {
                finished = true
                condition.unlock()
                condition.broadcast()
                return
            }
            let job = jobs.removeFirst()
            let notify = delivered
            condition.unlock()
            job(memory)
            notify()
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }
}
