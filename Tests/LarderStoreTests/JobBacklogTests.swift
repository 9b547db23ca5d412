@testable import LarderStore
import Testing

/// The order the store's queues hand jobs out in.
@Suite struct JobBacklogTests {
    struct Job: SourcedJob, Equatable, CustomStringConvertible {
        let source: UInt64
        let number: Int
        var description: String { "\(source).\(number)" }
    }

    @Test func fifoKeepsOrderAcrossCompactions() {
        var backlog = FIFOBacklog<Int>()
        var taken: [Int] = []
        for round in 0..<3 {
            for value in 0..<5000 { backlog.push(round * 5000 + value) }
            while !backlog.isEmpty { backlog.take(max: 700, into: &taken) }
        }
        #expect(taken == Array(0..<15000))
        #expect(backlog.popFirst() == nil)
    }

    /// One source with a thousand jobs queued first, then two others with one each: the others'
    /// jobs come in the first batch, not after the thousand.
    @Test func sourcesAreServedInTurn() {
        var backlog = RoundRobinBacklog<Job>(perSourceBatch: 8)
        for number in 0..<1000 { backlog.push(Job(source: 1, number: number)) }
        backlog.push(Job(source: 2, number: 0))
        backlog.push(Job(source: 3, number: 0))
        var batch: [Job] = []
        backlog.take(max: 32, into: &batch)
        #expect(batch.map(\.description) == ["1.0", "2.0", "3.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7"],
                "at most 8 of one source while others wait: \(batch)")
        // Each source's own jobs stay in order, and every job comes out exactly once.
        var all = batch
        while !backlog.isEmpty {
            var next: [Job] = []
            backlog.take(max: 32, into: &next)
            #expect(!next.isEmpty && next.count <= 8)
            all += next
        }
        #expect(all.count == 1002)
        #expect(all.filter { $0.source == 1 }.map(\.number) == Array(0..<1000))
    }

    /// Sources interleave one job each; a source that used its share waits for the next batch,
    /// keeping its place ahead of those that came after it.
    @Test func aBatchMixesSourcesAndTheCapCarriesOver() {
        var backlog = RoundRobinBacklog<Job>(perSourceBatch: 2)
        for number in 0..<4 {
            backlog.push(Job(source: 7, number: number))
            backlog.push(Job(source: 9, number: number))
        }
        var first: [Job] = []
        backlog.take(max: 3, into: &first)
        #expect(first.map(\.description) == ["7.0", "9.0", "7.1"])
        var second: [Job] = []
        backlog.take(max: 10, into: &second)
        #expect(second.map(\.description) == ["9.1", "7.2", "9.2", "7.3"], "\(second)")
        var third: [Job] = []
        backlog.take(max: 10, into: &third)
        #expect(third.map(\.description) == ["9.3"])
        #expect(backlog.isEmpty)
    }

    /// Thousands of sources come and go (connections): every job comes out once, in turn order,
    /// while the empty queues of sources gone are dropped along the way.
    @Test func manySourcesComeAndGo() {
        var backlog = RoundRobinBacklog<Job>(perSourceBatch: 8)
        var taken: [Job] = []
        for round in 0..<3 {
            for source in UInt64(1)...3000 { backlog.push(Job(source: source + UInt64(round) * 3000, number: round)) }
            while !backlog.isEmpty { backlog.take(max: 32, into: &taken) }
        }
        #expect(taken.count == 9000)
        #expect(taken.map(\.source) == Array(UInt64(1)...9000))
    }
}
