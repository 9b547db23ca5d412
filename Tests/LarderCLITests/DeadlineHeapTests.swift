@testable import LarderClient
import Testing

@Suite("DeadlineHeap")
struct DeadlineHeapTests {
    @Test("pops entries in deadline order", arguments: [0, 1, 7, 100])
    func order(count: Int) {
        let base = ContinuousClock.now
        var generator = SplitMix(seed: UInt64(count))
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

/// A small deterministic generator for test data.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
