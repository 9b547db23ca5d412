import LarderWire
import Testing

@Suite struct CallIDMapTests {
    /// A small deterministic generator, so a failure replays.
    private struct Generator {
        var state: UInt64
        mutating func next(below bound: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % bound
        }
    }

    @Test func agreesWithADictionaryThroughInsertsRemovalsAndLookups() {
        var map = CallIDMap<Int>()
        var model: [UInt64: Int] = [:]
        var random = Generator(state: 42)
        for step in 0..<20_000 {
            // Few distinct keys, so entries collide, probe past each other and are removed in
            // every order (the backward shift of a removal is what this checks).
            let key = 1 + random.next(below: 300)
            switch random.next(below: 4) {
            case 0, 1:
                let replaced = map.insert(step, forKey: key)
                #expect(replaced == model.updateValue(step, forKey: key))
            case 2:
                let removed = map.removeValue(forKey: key)
                #expect(removed == model.removeValue(forKey: key))
            default:
                #expect(map[key] == model[key])
                #expect(map.contains(key) == (model[key] != nil))
            }
            #expect(map.count == model.count)
        }
        for key in UInt64(1)...301 { #expect(map[key] == model[key]) }
    }

    @Test func holdsHTTP2StreamIDsAsTheyComeAndGo() {
        var map = CallIDMap<String>()
        // Odd, increasing ids with up to 100 open at once, as a busy HTTP/2 connection has them.
        for id in stride(from: UInt64(1), to: 20_001, by: 2) {
            map[id] = "stream \(id)"
            if id > 200 {
                let removed = map.removeValue(forKey: id - 200)
                #expect(removed == "stream \(id - 200)")
            }
        }
        #expect(map.count == 100)
        #expect(map[19_999] == "stream 19999")
        #expect(map[19_799] == nil)
        map[19_999] = nil
        #expect(map.count == 99)
        for id in stride(from: UInt64(19_801), to: 19_999, by: 2) { map[id] = nil }
        #expect(map.isEmpty)
        #expect(map[19_997] == nil)
    }

    @Test func theSetSaysWhetherAnIDWasNew() {
        var set = CallIDSet()
        let added = set.insert(7), addedAgain = set.insert(7)
        #expect(added && !addedAgain)
        #expect(set.contains(7))
        let removed = set.remove(7), removedAgain = set.remove(7)
        #expect(removed && !removedAgain)
        #expect(set.isEmpty)
        #expect(!set.contains(0))
    }
}
