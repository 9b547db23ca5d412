@testable import LarderClient
import LarderSystem
import LarderTestSupport
import Testing

@Suite("DeadlineHeap")
struct DeadlineHeapTests {
    @Test("pops entries in deadline order", arguments: [0, 1, 7, 100])
    func order(count: Int) {
        let base = ContinuousClock.now
        var generator = SplitMix64(seed: UInt64(count))
        var heap = DeadlineHeap()
        var offsets: [Int64] = []
        for id in 0..<count {
            let offset = Int64(generator.next() % 10_000)
            offsets.append(offset)
            heap.insert(.init(deadline: base.advanced(by: .milliseconds(offset)), callID: UInt64(id)))
        }
        var popped: [Int64] = []
        while let entry = heap.popTop() {
            popped.append(Int64((base.duration(to: entry.deadline) / .milliseconds(1)).rounded()))
        }
        #expect(popped == offsets.sorted())
        #expect(heap.isEmpty)
    }
}
