import LarderAPI
import LarderWire
import Testing

/// A reused arena packs every message as a fresh one would.
@Suite struct CArenaTests {
    @Test func aResetArenaPacksLikeAFreshOne() {
        let arena = CArena()
        let big = ListMealRecordsResponse(mealRecords: EncodedMessagesTests.meals(60, nameLength: 90),
                                          nextPageToken: "token")
        let small = Location(id: "c0ffee00-0000-4000-8000-000000000009", name: "玄關", colorHex: "#AABBCC")
        // Big (several chunks), small, big, small: each must match a fresh arena's bytes,
        // which needs the reused memory zeroed and the chunk bookkeeping right.
        for message in [big, big] {
            var out: [UInt8] = [7]
            ProtoCodec.encode(message, appendingTo: &out, using: arena)
            #expect(out == [7] + ProtoCodec.encode(message))
            out.removeAll()
            ProtoCodec.encode(small, appendingTo: &out, using: arena)
            #expect(out == ProtoCodec.encode(small))
        }
    }
}
