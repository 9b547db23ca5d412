import LarderAPI
import LarderJSON
import LarderWire
import Testing

@Suite("ProtoJSON round trips")
struct ProtoJSONRoundTripTests {
    static let allMessages = DescriptorCatalog.compiled.messages.values.sorted { $0.name < $1.name }

    @Test func catalogHoldsEveryMessageOfProto() {
        let names = Set(Self.allMessages.map(\.name))
        for name in ["larder.rpc.v1.RequestEnvelope", "larder.rpc.v1.RequestEnvelope.MetadataEntry",
                     "larder.v1.Location", "larder.v1.SummarizeMealRecordsResponse", "grpc.health.v1.HealthCheckResponse",
                     "larder.reflection.v1.DescribeTypeResponse", "larder.admin.v1.MethodMetrics.CallsByCodeEntry",
                     "google.protobuf.Timestamp", "google.protobuf.FieldMask", "google.protobuf.Empty"] {
            #expect(names.contains(name), "\(name) missing")
        }
    }

    /// JSON → protobuf → JSON gives back the same document, for every message type,
    /// and the protobuf bytes survive protobuf-c's own unpack and pack unchanged.
    @Test(arguments: allMessages)
    func everyMessageRoundTrips(_ type: MessageDescriptor) throws {
        let sample = SampleJSON.message(type)
        let binary = try ProtoJSON.binary(from: sample, type: type)
        let back = try ProtoJSON.json(fromBinary: binary, type: type)
        #expect(back == sample, "\(type.name):\n\(sample.rendered())\nvs\n\(back.rendered())")
        let repacked = try ProtoCodec.withUnpacked(type, from: binary) { message throws(RPCError) in
            ProtoCodec.pack(message.pointer)
        }
        #expect(repacked == binary)
        // And through text: rendering and parsing keep the document.
        #expect(try JSONParser.parse(sample.rendered()) == sample)
    }

    @Test(arguments: allMessages)
    func emptyObjectIsTheDefaultMessage(_ type: MessageDescriptor) throws {
        guard type.name != "google.protobuf.Timestamp", type.name != "google.protobuf.FieldMask" else { return }
        let binary = try ProtoJSON.binary(from: .object([]), type: type)
        #expect(binary.isEmpty)
        #expect(try ProtoJSON.json(fromBinary: [], type: type) == .object([]))
    }

    @Test func matchesTheHandWrittenSwiftTypes() throws {
        let meal = MealRecord(id: "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10", name: "拉麵", calories: 700, category: .dinner,
                              eatenAt: Timestamp(seconds: 1_764_460_800, nanos: 120_000_000))
        let json = try ProtoJSON.json(fromBinary: ProtoCodec.encode(meal), type: MealRecord.descriptor)
        #expect(json == .object([
            .init("id", .string("6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")), .init("name", .string("拉麵")),
            .init("calories", .number("700")), .init("category", .string("MEAL_CATEGORY_DINNER")),
            .init("eatenAt", .string("2025-11-30T00:00:00.120Z")),
        ]))
        let back = try ProtoCodec.decode(MealRecord.self, from: ProtoJSON.binary(from: json, type: MealRecord.descriptor))
        #expect(back == meal)
    }

    @Test func acceptsSnakeCaseNamesNumbersForEnumsAndInt64AndOffsets() throws {
        let type = UpdateMealRecordRequest.descriptor
        let canonical = try ProtoJSON.binary(fromJSON: """
            {"mealRecord": {"name": "a", "category": "MEAL_CATEGORY_LUNCH", "eatenAt": "2026-01-01T00:00:00Z"},
             "updateMask": "name,eatenAt"}
            """, type: type)
        let lenient = try ProtoJSON.binary(fromJSON: """
            {"meal_record": {"name": "a", "category": 2, "eaten_at": "2026-01-01T08:00:00+08:00"},
             "update_mask": "name,eaten_at"}
            """, type: type)
        #expect(lenient == canonical)
        let request = try ProtoCodec.decode(UpdateMealRecordRequest.self, from: canonical)
        #expect(request.updateMask.paths == ["name", "eaten_at"])
        #expect(request.mealRecord.category == .lunch)

        let totals = CategoryTotal.descriptor
        let fromNumber = try ProtoJSON.binary(fromJSON: #"{"totalCalories": 9007199254740993}"#, type: totals)
        let fromString = try ProtoJSON.binary(fromJSON: #"{"totalCalories": "9007199254740993"}"#, type: totals)
        #expect(fromNumber == fromString)
        #expect(try ProtoCodec.decode(CategoryTotal.self, from: fromNumber).totalCalories == 9_007_199_254_740_993)
        #expect(try ProtoJSON.json(fromBinary: fromNumber, type: totals)["totalCalories"] == .string("9007199254740993"))
    }

    @Test func unknownEnumNumbersPrintAsNumbers() throws {
        let type = CategoryTotal.descriptor
        let binary = try ProtoJSON.binary(fromJSON: #"{"category": 42}"#, type: type)
        #expect(try ProtoJSON.json(fromBinary: binary, type: type) == .object([.init("category", .number("42"))]))
    }

    @Test func emitDefaultsPrintsZeroScalarsAndEmptyLists() throws {
        let type = ListMealRecordsResponse.descriptor
        let json = try ProtoJSON.json(fromBinary: [], type: type, options: .init(emitDefaults: true))
        #expect(json == .object([.init("mealRecords", .array([])), .init("nextPageToken", .string(""))]))
    }

    @Test func mapsAreObjectsInEntryOrder() throws {
        let envelope = RequestEnvelope(callID: 7, method: "/m", payload: [1, 2], metadata: ["b": "2", "a": "1"])
        let type = RequestEnvelope.descriptor
        let json = try ProtoJSON.json(fromBinary: ProtoCodec.encode(envelope), type: type)
        #expect(json == .object([
            .init("callId", .string("7")), .init("method", .string("/m")), .init("payload", .string("AQI=")),
            .init("metadata", .object([.init("a", .string("1")), .init("b", .string("2"))])),
        ]))
        #expect(try ProtoCodec.decode(RequestEnvelope.self, from: ProtoJSON.binary(from: json, type: type)) == envelope)
    }

    @Test func floatsAndDoublesKeepTheirValues() throws {
        let type = try #require(DescriptorCatalog.compiled.message(named: "larder.admin.v1.MethodMetrics"))
        let json = try JSONParser.parse(#"{"latencySumSeconds": "NaN"}"#)
        let back = try ProtoJSON.json(fromBinary: ProtoJSON.binary(from: json, type: type), type: type)
        #expect(back == json)
        let big = try JSONParser.parse(#"{"latencySumSeconds": 1e300}"#)
        #expect(try ProtoJSON.json(fromBinary: ProtoJSON.binary(from: big, type: type), type: type)
                == .object([.init("latencySumSeconds", .number("1e+300"))]))
    }
}
