import LarderAPI
import LarderWire
import Testing

/// Replies built from stored encodings, and unpacking in a reusable arena.
@Suite struct EncodedMessagesTests {
    static func meals(_ count: Int, nameLength: Int = 12) -> [MealRecord] {
        let categories: [MealCategory] = [.breakfast, .lunch, .dinner, .snack]
        return (0..<count).map { (i: Int) -> MealRecord in
            let digits = String(i)
            let id = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
            let name = String(repeating: "餐", count: nameLength / 3) + digits
            let eatenAt = Timestamp(seconds: 1_800_000_000 - Int64(i) * 60)
            return MealRecord(id: id, name: name, calories: Int32(i * 10), category: categories[i % 4],
                              eatenAt: eatenAt, createTime: Timestamp(seconds: 1_700_000_000, nanos: 5_000_000),
                              updateTime: Timestamp(seconds: 1_700_000_001))
        }
    }

    static func encoded(_ meals: [MealRecord]) -> EncodedMessages {
        var page = EncodedMessages()
        for meal in meals { page.append(ProtoCodec.encode(meal)) }
        return page
    }

    @Test(arguments: [0, 1, 50])
    func theEncodedReplyIsByteForByteTheReplyItStandsFor(count: Int) throws {
        let meals = Self.meals(count)
        let token = count > 0 ? "next-page" : ""
        let direct = ProtoCodec.encode(ListMealRecordsResponse(mealRecords: meals, nextPageToken: token))
        let stored = EncodedListMealRecordsResponse(mealRecords: Self.encoded(meals), nextPageToken: token)
        #expect(ProtoCodec.encode(stored) == direct)
        #expect(try stored.decoded() == ListMealRecordsResponse(mealRecords: meals, nextPageToken: token))
        // And back: the stand-in decodes what the real reply encodes.
        #expect(try ProtoCodec.decode(EncodedListMealRecordsResponse.self, from: direct) == stored)
    }

    @Test func messagesAreIndexedDecodedAndDropped() throws {
        let meals = Self.meals(5)
        var page = Self.encoded(meals)
        #expect(page.count == 5)
        #expect(Array(page[2]) == ProtoCodec.encode(meals[2]))
        #expect(try page.decode(MealRecord.self, at: 4) == meals[4])
        page.removeLast(2)
        #expect(page.count == 3)
        #expect(page.bytes == meals[0..<3].flatMap { ProtoCodec.encode($0) })
        #expect(try page.decode(MealRecord.self, at: 2) == meals[2])
    }

    @Test func anArenaDecodesMessagesLargerThanItsBlockAndNestedCalls() throws {
        let arena = UnpackArena(blockSize: 1024)
        let big = ListMealRecordsResponse(mealRecords: Self.meals(40, nameLength: 90), nextPageToken: "t")
        let bytes = ProtoCodec.encode(big)
        #expect(bytes.count > 4 * 1024)
        for _ in 0..<3 {  // reused after each outermost call
            let inner = ProtoCodec.encode(Self.meals(1)[0])
            let (outer, nested) = try bytes.withUnsafeBytes { outerBytes in
                try arena.withUnpacked(ListMealRecordsResponse.descriptor, from: outerBytes) { message throws(RPCError) in
                    let nested = try inner.withUnsafeBytes { innerBytes in
                        Result { () throws(RPCError) in try arena.decode(MealRecord.self, from: innerBytes) }
                    }.get()
                    return (try ListMealRecordsResponse(unpacked: message), nested)
                }
            }
            #expect(outer == big)
            #expect(nested == Self.meals(1)[0])
        }
    }

    @Test func anArenaReportsInvalidBytesAndStaysUsable() throws {
        let arena = UnpackArena(blockSize: 1024)
        let garbage: [UInt8] = [0x0A, 0xFF, 0xFF, 0xFF, 0x0F]
        let error = garbage.withUnsafeBytes { raw in
            Result { () throws(RPCError) in try arena.decode(MealRecord.self, from: raw) }
        }
        guard case .failure(let failure) = error else { Issue.record("garbage decoded"); return }
        #expect(failure.code == .invalidArgument)
        let meal = Self.meals(1)[0]
        let again = try ProtoCodec.encode(meal).withUnsafeBytes { raw in try arena.decode(MealRecord.self, from: raw) }
        #expect(again == meal)
    }
}
