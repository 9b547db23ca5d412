import LarderAPI
import LarderWire
import Testing

@Suite("Message round trips")
struct MessageRoundTripTests {
    @Test("encode then decode gives the same value", arguments: Fixtures.allMessages.indices)
    func roundTrip(index: Int) throws {
        try expectRoundTrip(Fixtures.allMessages[index])
    }

    @Test("every message type has a sample")
    func samplesCoverEveryType() {
        let names = Set(Fixtures.allMessages.map { type(of: $0).protoName })
        #expect(names.count == Fixtures.allMessages.count, "a type is listed twice")
        // 7 per larder.v1 entity (3), 4 summary messages + 2 health + Timestamp + Empty.
        #expect(names.count == 3 * 7 + 7 + 4 + 2 + 2)
    }

    @Test("strings survive byte for byte")
    func stringsByteForByte() throws {
        // Precomposed and decomposed forms compare equal as Swift Strings; the bytes must not change.
        let names = ["café", "cafe\u{301}", "冷蔵庫", "냉장고", "🧂 salt", "\u{FEFF}bom", String(repeating: "漢", count: 4000)]
        for name in names {
            let decoded = try ProtoCodec.decode(Location.self, from: ProtoCodec.encode(Location(name: name)))
            #expect(Array(decoded.name.utf8) == Array(name.utf8))
        }
        let group = CategoryGroup(name: "cafe\u{301}", itemCategories: [ItemCategory(name: "caf\u{E9}")])
        let decoded = try ProtoCodec.decode(ListCategoryGroupsResponse.self,
                                            from: ProtoCodec.encode(ListCategoryGroupsResponse(categoryGroups: [group])))
        #expect(decoded.categoryGroups.map { Array($0.name.utf8) } == [Array("cafe\u{301}".utf8)])
        #expect(decoded.categoryGroups.first?.itemCategories.map { Array($0.name.utf8) } == [Array("caf\u{E9}".utf8)])
    }

    @Test("optional timestamps stay present or absent", arguments: [nil, Fixtures.epoch, Fixtures.beforeEpoch])
    func optionalTimestamps(time: Timestamp?) throws {
        let record = MealRecord(name: "x", category: .lunch, eatenAt: time, createTime: time, updateTime: nil)
        let decoded = try ProtoCodec.decode(MealRecord.self, from: ProtoCodec.encode(record))
        #expect(decoded.eatenAt == time)
        #expect(decoded.createTime == time)
        #expect(decoded.updateTime == nil)

        let request = ListMealRecordsRequest(startTime: time, endTime: nil)
        let decodedRequest = try ProtoCodec.decode(ListMealRecordsRequest.self, from: ProtoCodec.encode(request))
        #expect(decodedRequest.startTime == time)
        #expect(decodedRequest.endTime == nil)
    }

    @Test("field masks keep their paths in order", arguments: [[], ["name"], ["eaten_at", "name", "calories"]])
    func fieldMasks(paths: [String]) throws {
        let request = UpdateMealRecordRequest(mealRecord: Fixtures.breakfast, updateMask: FieldMask(paths: paths))
        let decoded = try ProtoCodec.decode(UpdateMealRecordRequest.self, from: ProtoCodec.encode(request))
        #expect(decoded.updateMask.paths == paths)
        #expect(decoded.updateMask.covers("name") == (paths.isEmpty || paths.contains("name")))
    }

    @Test("default values encode to no bytes and decode back to defaults")
    func defaults() throws {
        #expect(ProtoCodec.encode(MealRecord()).isEmpty)
        #expect(try ProtoCodec.decode(MealRecord.self, from: []) == MealRecord())
        #expect(try ProtoCodec.decode(CategoryGroup.self, from: []) == CategoryGroup())
        #expect(try ProtoCodec.decode(HealthCheckResponse.self, from: []).status == .unknown)
        // A missing sub-message reads as its default value.
        #expect(try ProtoCodec.decode(CreateMealRecordRequest.self, from: []).mealRecord == MealRecord())
    }

    @Test("a status number the build does not know reads as .unrecognized and encodes back")
    func unknownServingStatus() throws {
        let bytes: [UInt8] = [0x08, 0x09]  // field 1 (status), varint 9
        let response = try ProtoCodec.decode(HealthCheckResponse.self, from: bytes)
        #expect(response.status == .unrecognized(9))
        #expect(ProtoCodec.encode(response) == bytes)
        #expect(try ProtoCodec.decode(HealthCheckResponse.self, from: [0x08, 0x01]).status == .serving)
    }

    private func expectRoundTrip<M: ProtoMessage & Hashable>(_ value: M) throws {
        let bytes = ProtoCodec.encode(value)
        let decoded = try ProtoCodec.decode(M.self, from: bytes)
        #expect(decoded == value, "\(M.protoName)")
        // Encoding is deterministic, so the decoded value encodes to the same bytes.
        #expect(ProtoCodec.encode(decoded) == bytes, "\(M.protoName)")
        // The unsafe-buffer entry point agrees with the array one.
        let viaBuffer = try bytes.withUnsafeBytes { raw throws(RPCError) in try ProtoCodec.decode(M.self, from: raw) }
        #expect(viaBuffer == value, "\(M.protoName)")
    }
}
