import Dispatch
import Foundation
@testable import LarderStore
import Synchronization
import Testing

/// The writer's wait for company (`JobQueue.take(max:gatheringFor:into:)`): what ends it,
/// and that a lone job never waits. The delays are far longer than any test may take, so
/// a wait that should not happen shows as a timeout, never as a slow pass.
@Suite struct JobQueueTests {
    /// Longer than the whole suite may run: waiting it out fails the test.
    static let forever: UInt64 = 3_600 * 1_000_000_000

    /// One `take` on a thread of its own; `wait()` returns what it took.
    final class Taker: Sendable {
        private let result = Mutex<(Bool, [Int])?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ queue: JobQueue<Int>, max: Int, gatheringFor nanoseconds: UInt64) {
            Thread.detachNewThread { [self] in
                var batch: [Int] = []
                let taken = queue.take(max: max, gatheringFor: nanoseconds, into: &batch)
                result.withLock { $0 = (taken, batch) }
                done.signal()
            }
        }

        /// What the take returned; nil if it had not returned after 300 s.
        func wait() -> (taken: Bool, batch: [Int])? {
            guard done.wait(timeout: .now() + 300) == .success else { return nil }
            return result.withLock { $0 }
        }
    }

    /// Waits (bounded) until a consumer of `queue` is gathering.
    static func untilGathering(_ queue: JobQueue<Int>) -> Bool {
        for _ in 0..<60_000 {
            if queue.isGathering { return true }
            usleep(1000)
        }
        return false
    }

    /// A queue holding jobs 1 and 2, and a taker (`max`, no end to the delay) waiting for more.
    static func gatheringQueue(max: Int) -> (JobQueue<Int>, Taker, gathering: Bool) {
        let queue = JobQueue<Int>()
        _ = queue.push(1)
        _ = queue.push(2)
        let taker = Taker(queue, max: max, gatheringFor: forever)
        return (queue, taker, untilGathering(queue))
    }

    @Test func aLoneJobIsTakenWithoutWaiting() {
        let queue = JobQueue<Int>()
        _ = queue.push(1)
        let taker = Taker(queue, max: 8, gatheringFor: Self.forever)
        let result = taker.wait()
        #expect(result?.taken == true)
        #expect(result?.batch == [1])
        queue.close()
    }

    @Test func jobsPushedDuringTheWaitJoinTheBatchAndFillingItEndsTheWait() {
        let (queue, taker, gathering) = Self.gatheringQueue(max: 5)
        #expect(gathering)
        for job in 3...6 { _ = queue.push(job) }
        let result = taker.wait()
        #expect(result?.batch == [1, 2, 3, 4, 5])
        var rest: [Int] = []
        #expect(queue.take(max: 5, into: &rest) && rest == [6])
        queue.close()
    }

    @Test func closingTheQueueEndsTheWaitWithTheJobsTaken() {
        let (queue, taker, gathering) = Self.gatheringQueue(max: 8)
        #expect(gathering)
        queue.close()
        let result = taker.wait()
        #expect(result?.taken == true)
        #expect(result?.batch == [1, 2])
        var rest: [Int] = []
        #expect(!queue.take(max: 8, gatheringFor: Self.forever, into: &rest))
    }

    @Test func theWaitEndsAfterTheDelay() {
        let queue = JobQueue<Int>()
        _ = queue.push(1)
        _ = queue.push(2)
        let result = Taker(queue, max: 8, gatheringFor: 1_000_000).wait()
        #expect(result?.batch == [1, 2])
        #expect(!queue.isGathering)
        queue.close()
    }

    @Test func aFullBatchAndAZeroDelayNeverWait() {
        let queue = JobQueue<Int>()
        for job in 1...3 { _ = queue.push(job) }
        #expect(Taker(queue, max: 3, gatheringFor: Self.forever).wait()?.batch == [1, 2, 3])
        for job in 4...5 { _ = queue.push(job) }
        #expect(Taker(queue, max: 8, gatheringFor: 0).wait()?.batch == [4, 5])
        queue.close()
    }
}
