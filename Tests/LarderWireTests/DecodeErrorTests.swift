import LarderAPI
import LarderTestSupport
import LarderWire
import Testing

@Suite("Rejecting bad payloads")
struct DecodeErrorTests {
    /// `GetLocationRequest(id: "abcd")` with the byte at `offset` of the id replaced by `byte`.
    static func patchedID(_ byte: UInt8, at offset: Int) -> [UInt8] {
        var bytes = ProtoCodec.encode(GetLocationRequest(id: "abcd"))
        // field 1, wire type 2, length 4, then the id.
        precondition(bytes == [0x0A, 0x04, 0x61, 0x62, 0x63, 0x64])
        bytes[2 + offset] = byte
        return bytes
    }

    @Test("invalid UTF-8 in a string field is INVALID_ARGUMENT",
          arguments: [(UInt8(0xFF), 1), (0xC3, 3), (0x80, 0), (0xED, 2)])
    func invalidUTF8(byte: UInt8, offset: Int) {
        let bytes = Self.patchedID(byte, at: offset)
        let error = #expect(throws: RPCError.self) { try ProtoCodec.decode(GetLocationRequest.self, from: bytes) }
        #expect(error?.code == .invalidArgument)
        // protobuf-c 1.4 passes the bytes through and CFields names the field; a protobuf-c that
        // validates UTF-8 itself rejects the whole payload instead.
        #expect(error?.message == "id is not valid UTF-8"
                || error?.message == "payload is not a valid larder.v1.GetLocationRequest message")
    }

    @Test("invalid UTF-8 in a nested string is INVALID_ARGUMENT")
    func invalidNestedUTF8() throws {
        var bytes = ProtoCodec.encode(ListItemCategoriesResponse(itemCategories: [ItemCategory(name: "rice")]))
        let r = try #require(bytes.firstIndex(of: UInt8(ascii: "r")))
        bytes[r] = 0xFE
        let error = #expect(throws: RPCError.self) {
            try ProtoCodec.decode(ListItemCategoriesResponse.self, from: bytes)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "item_category.name is not valid UTF-8"
                || error?.message == "payload is not a valid larder.v1.ListItemCategoriesResponse message")
    }

    @Test("valid UTF-8 built the same way decodes")
    func patchedButValid() throws {
        // Control for the tests above: the patching itself does not break the message.
        let decoded = try ProtoCodec.decode(GetLocationRequest.self, from: Self.patchedID(UInt8(ascii: "z"), at: 1))
        #expect(decoded.id == "azcd")
    }

    static let garbage: [[UInt8]] = [
        [0xFF, 0xFF, 0xFF, 0xFF],                        // invalid tag
        [0x0A, 0x10, 0x61],                              // length runs past the end
        [0x0A],                                          // tag without a length
        [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // over-long varint
        [0x00, 0x01],                                    // field number 0
        [0x0F, 0x00],                                    // wire type 7
    ]

    @Test("garbage bytes are INVALID_ARGUMENT", arguments: garbage)
    func garbageBytes(bytes: [UInt8]) {
        let error = #expect(throws: RPCError.self) { try ProtoCodec.decode(GetLocationRequest.self, from: bytes) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "payload is not a valid larder.v1.GetLocationRequest message")
    }

    @Test("every truncation of an encoded message is rejected or decodes to a prefix")
    func truncated() throws {
        let full = ProtoCodec.encode(ListMealRecordsResponse(mealRecords: [Fixtures.breakfast, Fixtures.snack],
                                                             nextPageToken: "token"))
        let whole = try ProtoCodec.decode(ListMealRecordsResponse.self, from: full)
        var rejected = 0
        for length in 1..<full.count {
            do {
                let decoded = try ProtoCodec.decode(ListMealRecordsResponse.self, from: Array(full[..<length]))
                // A cut exactly between two fields is a valid shorter message; it never equals the whole.
                #expect(decoded != whole)
            } catch {
                #expect(error.code == .invalidArgument)
                rejected += 1
            }
        }
        // Only the cuts at the 2 field boundaries (after each meal record) are valid messages.
        #expect(rejected == full.count - 1 - 2)
    }

    @Test("a wrong wire type for a known field is INVALID_ARGUMENT")
    func wrongWireType() {
        // Field 3 (calories) sent as a length-delimited field.
        let error = #expect(throws: RPCError.self) {
            try ProtoCodec.decode(MealRecord.self, from: [0x1A, 0x01, 0x00])
        }
        #expect(error?.code == .invalidArgument)
    }
}

@Suite("MealCategory on the wire")
struct MealCategoryWireTests {
    @Test("an unknown MealCategory number decodes as .unrecognized and encodes back unchanged",
          arguments: [Int64(7), 5, -1, Int64(Int32.max)])
    func unknownMealRecordCategory(number: Int64) throws {
        // MealRecord field 4 (category), varint.
        let bytes = [0x20] + ProtobufWireBytes.varint(UInt64(bitPattern: number))
        let record = try ProtoCodec.decode(MealRecord.self, from: bytes)
        #expect(record.category == .unrecognized(Int32(number)))
        #expect(record.category.rawValue == Int32(number))
        #expect(ProtoCodec.encode(record) == bytes)
    }

    @Test("an unknown MealCategory inside a reply's totals decodes, so an older client reads a newer server")
    func unknownNested() throws {
        let total = [0x08] + ProtobufWireBytes.varint(42)
        let response = [0x22, UInt8(total.count)] + total  // SummarizeMealRecordsResponse.categories
        let decoded = try ProtoCodec.decode(SummarizeMealRecordsResponse.self, from: response)
        #expect(decoded.categories.map(\.category) == [.unrecognized(42)])
        #expect(MealCategory(known: 42) == nil && MealCategory(known: 2) == .lunch)
        #expect(MealCategory(rawValue: 42).shortName == "unknown(42)")
    }

    @Test("every known number decodes", arguments: MealCategory.allCases)
    func knownNumbers(category: MealCategory) throws {
        let bytes = [0x20] + ProtobufWireBytes.varint(UInt64(category.rawValue))
        #expect(try ProtoCodec.decode(MealRecord.self, from: bytes).category == category)
    }
}

@Suite("DecodeLimits")
struct DecodeLimitsTests {
    static func check(_ bytes: [UInt8], limits: DecodeLimits = .server) -> RPCError? {
        bytes.withUnsafeBytes { raw in
            do throws(RPCError) {
                try DecodeLimitScan.check(raw, as: RequestEnvelope.descriptor, limits: limits)
                return nil
            } catch {
                return error
            }
        }
    }

    @Test func aValidEnvelopeIsWithinTheLimits() {
        let envelope = RequestEnvelope(callID: 9, method: "/a.B/C", payload: [1, 2, 3], metadata: ["authorization": "Bearer x"])
        #expect(Self.check(ProtoCodec.encode(envelope)) == nil)
        let summary = ProtoCodec.encode(envelope).withUnsafeBytes { DecodeLimitScan.envelopeSummary($0) }
        #expect(summary.callID == 9)
        #expect(summary.metadataBytes == "authorization".utf8.count + "Bearer x".utf8.count + 32)
    }

    static func summary(_ bytes: [UInt8]) -> (callID: UInt64, metadataBytes: Int) {
        bytes.withUnsafeBytes { DecodeLimitScan.envelopeSummary($0, limits: .server) }
    }

    /// The call id is read among the first 20,000 top-level fields, past any bound, so an
    /// envelope refused for a bound is refused to its call; the last one counts, as when
    /// protobuf decodes it; malformed bytes before it hide it.
    @Test func theSummaryFindsTheCallIDPastTheBounds() {
        let fields: [UInt8] = Array(repeating: [UInt8]([0x20, 0x00]), count: 10_001).flatMap { $0 }  // timeout_ms = 0, 10,001 times
        #expect(Self.summary(fields + [0x08, 0x2A]).callID == 42)
        let entry: [UInt8] = [0x2A, 0x82, 0x01, 0x0A, 0x01, 0x6B, 0x12, 0x7D] + Array(repeating: 0x76, count: 125)
        let metadata = Array(repeating: entry, count: 60).flatMap { $0 }  // 60 × (1 + 125 + 32) = 9,480 bytes
        let overMetadata = Self.summary(metadata + [0x08, 0x07])
        #expect(overMetadata.callID == 7)
        #expect(overMetadata.metadataBytes > DecodeLimits.server.maxMetadataBytes)
        #expect(Self.summary([0x08, 0x01] + fields + [0x08, 0x02]).callID == 2)
        #expect(Self.summary([0x08, 0x03] + fields + [0x08, 0x00]).callID == 0)
        #expect(Self.summary([0x08, 0x03, 0x0F] + [0x08, 0x04]).callID == 3, "a wire type 7 ends the scan")
        #expect(Self.summary([0x0F, 0x08, 0x04]).callID == 0)
        // The scan stops after twice the field bound, whatever the frame holds.
        #expect(DecodeLimitScan.envelopeScanFields(.server) == 20_000)
        let timeouts = { (count: Int) in Array(repeating: [UInt8]([0x20, 0x00]), count: count).flatMap { $0 } }
        #expect(Self.summary(timeouts(19_999) + [0x08, 0x09]).callID == 9)
        #expect(Self.summary(timeouts(20_000) + [0x08, 0x09]).callID == 0)
    }

    @Test func eachBoundIsEnforcedWithAClearMessage() {
        let limits = DecodeLimits(maxFields: 50, maxUnknownFields: 3, maxRepeatedElements: 5, maxMetadataBytes: 1024)
        // 60 repeated call_id fields.
        let fields = Self.check(Array(repeating: [0x08, 0x01], count: 60).flatMap { $0 }, limits: limits)
        #expect(fields?.code == .resourceExhausted)
        #expect(fields?.message.contains("more than 50 fields") == true)
        // Four unknown fields (numbers 100-103).
        let unknown = Self.check([0xA0, 0x06, 0, 0xA8, 0x06, 0, 0xB0, 0x06, 0, 0xB8, 0x06, 0], limits: limits)
        #expect(unknown?.message.contains("more than 3 unknown fields") == true)
        // Six metadata entries: over five elements of one repeated field.
        let metadata = Dictionary(uniqueKeysWithValues: (0..<6).map { ("k\($0)", "v") })
        let repeated = Self.check(ProtoCodec.encode(RequestEnvelope(callID: 1, method: "m", payload: [], metadata: metadata)),
                                  limits: limits)
        #expect(repeated?.message.contains("more than 5 elements in metadata") == true)
    }

    /// `message` field `number`, length-delimited, `count` times over.
    static func repeatedField(_ number: UInt32, _ message: [UInt8], count: Int) -> [UInt8] {
        precondition(number < 16 && message.count < 128)
        return Array(repeating: [UInt8(number << 3 | 2), UInt8(message.count)] + message, count: count).flatMap { $0 }
    }

    /// What decoding `bytes` as `M` in `arena` throws (nil: it decodes).
    static func decodeError<M: ProtoMessage>(_ type: M.Type, _ bytes: [UInt8], in arena: UnpackArena) -> RPCError? {
        bytes.withUnsafeBytes { raw in
            do throws(RPCError) {
                _ = try arena.decode(M.self, from: raw)
                return nil
            } catch {
                return error
            }
        }
    }

    /// What the scan throws for `bytes` as a `descriptor` message (nil: nothing).
    static func scanError(_ bytes: [UInt8], as descriptor: MessageDescriptor) -> RPCError? {
        bytes.withUnsafeBytes { raw in
            do throws(RPCError) {
                try DecodeLimitScan.check(raw, as: descriptor, limits: .server)
                return nil
            } catch {
                return error
            }
        }
    }

    /// protobuf-c merges each repeat of a singular message field by copying the repeated fields
    /// merged so far (an update mask of 4,999 one-path repeats: ~99 MB and ~19 ms per 40 KB
    /// frame); the scan refuses a ninth occurrence before any of that happens.
    @Test func aSingularMessageFieldOccursAtMostEightTimes() throws {
        let path: [UInt8] = [0x0A, 0x04] + Array("name".utf8)  // FieldMask.paths = "name"
        let arena = UnpackArena(limits: .server)
        let eight = Self.repeatedField(2, path, count: 8)  // UpdateMealRecordRequest.update_mask × 8
        let decoded = try eight.withUnsafeBytes { try arena.decode(UpdateMealRecordRequest.self, from: $0) }
        #expect(decoded.updateMask.paths == Array(repeating: "name", count: 8), "merged, as protobuf does")

        let message = "larder.v1.UpdateMealRecordRequest has update_mask more than 8 times: a message field that is not "
            + "repeated may occur at most 8 times (encoders write it once)"
        let nine = Self.decodeError(UpdateMealRecordRequest.self, Self.repeatedField(2, path, count: 9), in: arena)
        let attack = Self.decodeError(UpdateMealRecordRequest.self, Self.repeatedField(2, path, count: 4_999), in: arena)
        #expect(nine == RPCError(.invalidArgument, message))
        #expect(attack == RPCError(.invalidArgument, message))
        // Nested: the path names it; UpdateLocationRequest.location { create_time × 9 }.
        let location = Self.repeatedField(4, [0x08, 0x01], count: 9)
        let nested = Self.decodeError(UpdateLocationRequest.self, [0x0A, UInt8(location.count)] + location, in: arena)
        #expect(nested == RPCError(.invalidArgument, "larder.v1.UpdateLocationRequest has location.create_time more "
                                   + "than 8 times: a message field that is not repeated may occur at most 8 times "
                                   + "(encoders write it once)"))
        // A repeated message field is not merged: its elements are bounded as elements.
        let categories = Self.repeatedField(1, [], count: 9)  // ListItemCategoriesResponse.item_categories
        #expect(Self.decodeError(ListItemCategoriesResponse.self, categories, in: arena) == nil)
    }

    /// A length-delimited field `number` (< 16) holding `body` (< 128 bytes).
    static func field(_ number: UInt32, _ body: [UInt8]) -> [UInt8] {
        precondition(number < 16 && body.count < 128)
        return [UInt8(number << 3 | 2), UInt8(body.count)] + body
    }

    /// Repeats of a singular message field merge as protobuf says (a later occurrence sets only
    /// the fields it carries); protobuf-c alone kept the last occurrence's scalars, zeros included,
    /// so a Timestamp sent as `{seconds}` then `{nanos}` lost its seconds.
    @Test func repeatsOfASingularMessageFieldMergeAsProtobufSays() throws {
        let arena = UnpackArena(limits: .server)
        let seconds = [0x08] + ProtobufWireBytes.varint(1_767_225_600)
        // MealRecord { name, calories, eaten_at {seconds} } then MealRecord { category, eaten_at {nanos: 7} }.
        let first = Self.field(2, Array("raw".utf8)) + [0x18, 0x01] + Self.field(5, seconds)
        let second: [UInt8] = [0x20, 0x04] + Self.field(5, [0x10, 0x07])
        let bytes = Self.field(1, first) + Self.field(1, second)
        let decoded = try bytes.withUnsafeBytes { try arena.decode(CreateMealRecordRequest.self, from: $0) }
        let record = decoded.mealRecord
        #expect(record.name == "raw" && record.calories == 1 && record.category == .snack)
        #expect(record.eatenAt == Timestamp(seconds: 1_767_225_600, nanos: 7))

        // A later scalar replaces an earlier one; repeated fields append (update_mask.paths).
        let twice = Self.field(1, Self.field(2, Array("a".utf8))) + Self.field(1, Self.field(2, Array("b".utf8)))
        let masks = Self.field(2, Self.field(1, Array("name".utf8))) + Self.field(2, Self.field(1, Array("calories".utf8)))
        let update = try (twice + masks).withUnsafeBytes { try arena.decode(UpdateMealRecordRequest.self, from: $0) }
        #expect(update.mealRecord.name == "b")
        #expect(update.updateMask.paths == ["name", "calories"])

        // Merged at every depth: eaten_at repeated inside each of two meal_record occurrences.
        let deep = Self.field(1, Self.field(5, seconds) + Self.field(5, [0x10, 0x01]))
            + Self.field(1, Self.field(5, [0x10, 0x09]))
        let merged = try deep.withUnsafeBytes { try arena.decode(CreateMealRecordRequest.self, from: $0) }
        #expect(merged.mealRecord.eatenAt == Timestamp(seconds: 1_767_225_600, nanos: 9))
    }

    /// A oneof member merges only with its occurrences since another member of its oneof
    /// (which cleared it), and the last member on the wire wins.
    @Test func aOneofMemberMergesOnlySinceAnotherMemberCleared() throws {
        let arena = UnpackArena(limits: .server)
        typealias Request = GrpcReflectionV1ServerReflectionRequest
        let typeA = Self.field(5, Self.field(1, Array("a.A".utf8)))  // file_containing_extension { containing_type }
        let number = Self.field(5, [0x10, 0x05])  // file_containing_extension { extension_number: 5 }
        let symbol = Self.field(4, Array("x".utf8))  // file_containing_symbol
        func decode(_ bytes: [UInt8]) throws -> Request.OneOf_MessageRequest? {
            let request = try bytes.withUnsafeBytes { raw in try arena.decode(Request.self, from: raw) }
            return request.messageRequest
        }
        let both = GrpcReflectionV1ExtensionRequest(containingType: "a.A", extensionNumber: 5)
        #expect(try decode(typeA + number) == .fileContainingExtension(both))
        #expect(try decode(typeA + symbol + number)
                == .fileContainingExtension(GrpcReflectionV1ExtensionRequest(containingType: "", extensionNumber: 5)))
        #expect(try decode(typeA + number + symbol) == .fileContainingSymbol("x"))
    }

    /// The rule holds for every message type compiled in, request or not, for each of its
    /// singular message fields (oneof members included).
    @Test func everySingularMessageFieldOfEveryMessageIsBounded() throws {
        var checked = 0
        for descriptor in DescriptorCatalog.compiled.messages.values {
            for field in descriptor.fields where field.type == .message && field.label != .repeated {
                let occurrence = ProtobufWireBytes.varint(UInt64(field.number) << 3 | 2) + [0]
                let nine = Self.scanError(Array(repeating: occurrence, count: 9).flatMap { $0 }, as: descriptor)
                let eight = Self.scanError(Array(repeating: occurrence, count: 8).flatMap { $0 }, as: descriptor)
                #expect(nine?.code == .invalidArgument, "\(descriptor.name).\(field.name)")
                #expect(nine?.message.hasPrefix("\(descriptor.name) has \(field.name) more than 8 times") == true,
                        "\(nine?.message ?? "accepted")")
                #expect(eight == nil, "\(descriptor.name).\(field.name)")
                checked += 1
            }
        }
        #expect(checked > 20, "the catalog's singular message fields (\(checked))")
    }
}
