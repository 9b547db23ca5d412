@testable import LarderStore
import LarderWire
import Testing

/// The small codecs behind page tokens and summary dates.
@Suite struct EncodingTests {
    @Test func pageTokenBase64IsURLSafeUnpaddedAndCanonical() {
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .urlSafe, padded: false) == "-_8")
        #expect(Base64.decode("-_8".utf8, rules: .pageToken) == [0xFB, 0xFF])
        #expect(Base64.decode("+/8".utf8, rules: .pageToken) == nil)
        #expect(Base64.decode("Zm9vYg".utf8, rules: .pageToken) == Array("foob".utf8))
        #expect(Base64.decode("Zm9vYh".utf8, rules: .pageToken) == nil)  // non-canonical trailing bits
        #expect(Base64.decode("Zm9vYg==".utf8, rules: .pageToken) == nil)
    }

    @Test func pageTokenRoundTripsAndChecksFilters() throws {
        let five = StoreInstant(milliseconds: 5)
        let hash = PageToken.filterHash(start: five, end: nil, category: 2)
        let token = PageToken(cursor: MealRecordCursor(eatenAt: StoreInstant(milliseconds: -62_135_596_800_000,
                                                                             nanos: 999_999),
                                                       id: "0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f"),
                              filterHash: hash)
        let text = token.encoded()
        #expect(text.count == 50)
        #expect(try PageToken.decode(text, filterHash: hash) == token)
        #expect(PageToken.filterHash(start: nil, end: five, category: 2) != hash)
        #expect(PageToken.filterHash(start: five, end: nil, category: 0) != hash)
        // Filters that differ by one nanosecond are other filters.
        #expect(PageToken.filterHash(start: StoreInstant(milliseconds: 5, nanos: 1), end: nil, category: 2) != hash)
        #expect(throws: (any Error).self) { try PageToken.decode(text, filterHash: hash &+ 1) }
    }

    @Test func uuidParsing() {
        #expect(StoreID.normalized("0F8E6D2C-3B1A-4C5D-9E8F-7A6B5C4D3E2F") == "0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f")
        #expect(StoreID.normalized("0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2") == nil)
        #expect(StoreID.normalized("0f8e6d2c+3b1a-4c5d-9e8f-7a6b5c4d3e2f") == nil)
        #expect(StoreID.normalized("０f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2") == nil)
    }
}
