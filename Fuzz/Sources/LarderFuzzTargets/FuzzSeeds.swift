import LarderAPI
import LarderMemoryStore
import LarderWire

/// The seed corpus of each target (committed under Fuzz/corpus/<target>/,
/// regenerated with `<fuzz binary> --write-seeds DIR`): valid inputs of every
/// kind plus the classic hostile shapes.
public enum FuzzSeeds {
    public struct Seed: Sendable {
        public let name: String
        public let bytes: [UInt8]
    }

    public static func seeds(for target: FuzzTarget) -> [Seed] {
        switch target {
        case .frames: frames
        case .envelope: envelopes
        case .payload: payloads
        case .http2: http2
        }
    }

    // MARK: - Raw protobuf

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    /// A length-delimited field.
    static func field(_ number: UInt64, _ bytes: [UInt8]) -> [UInt8] {
        varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
    }

    /// A varint field.
    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }

    static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    static func envelope(_ callID: UInt64, _ path: String, _ payload: [UInt8], timeout: UInt32 = 0,
                         metadata: [String: String] = [:]) -> [UInt8] {
        ProtoCodec.encode(RequestEnvelope(callID: callID, method: path, payload: payload,
                                          timeoutMilliseconds: timeout, metadata: metadata))
    }

    static let uuid = "0d6f1c9e-3b7a-4f7e-9a53-8b1f4c2d6e70"
    static let time = Timestamp(seconds: 1_717_000_000, nanos: 123_000_000)

    // MARK: - Payloads: byte 0 picks the method

    static func methodIndex(_ path: String) -> UInt8 {
        UInt8(PayloadMethods.all.firstIndex { $0.path == path } ?? 0)
    }

    static func payload(_ name: String, _ path: String, _ bytes: [UInt8]) -> Seed {
        Seed(name: name, bytes: [methodIndex(path)] + bytes)
    }

    static func payload<R: ProtoMessage, S>(_ name: String, _ method: RPCMethod<R, S>, _ request: R) -> Seed {
        payload(name, method.path, ProtoCodec.encode(request))
    }

    static var payloads: [Seed] {
        let group = CategoryGroup(id: MemoryStore.groupID, name: "Food", colorHex: "#ff8800")
        let category = ItemCategory(name: "Rice", iconName: "leaf.fill", categoryGroupID: MemoryStore.groupID)
        let meal = MealRecord(name: "Ramen", calories: 700, category: .dinner, eatenAt: time)
        var seeds: [Seed] = [
            payload("create-group", CategoryGroupMethods.createCategoryGroup,
                    CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "Drinks", colorHex: "#00ff00"))),
            payload("get-group", CategoryGroupMethods.getCategoryGroup,
                    GetCategoryGroupRequest(id: MemoryStore.groupID, includeItemCategories: true)),
            payload("list-groups", CategoryGroupMethods.listCategoryGroups, ListCategoryGroupsRequest()),
            payload("update-group", CategoryGroupMethods.updateCategoryGroup,
                    UpdateCategoryGroupRequest(categoryGroup: group, updateMask: ["name", "color_hex"])),
            payload("delete-group-cascade", CategoryGroupMethods.deleteCategoryGroup,
                    DeleteCategoryGroupRequest(id: MemoryStore.groupID, cascade: true)),
            payload("delete-group-in-use", CategoryGroupMethods.deleteCategoryGroup,
                    DeleteCategoryGroupRequest(id: MemoryStore.groupID)),
            payload("create-item-category", ItemCategoryMethods.createItemCategory,
                    CreateItemCategoryRequest(itemCategory: category)),
            payload("get-item-category", ItemCategoryMethods.getItemCategory,
                    GetItemCategoryRequest(id: MemoryStore.categoryID)),
            payload("list-item-categories", ItemCategoryMethods.listItemCategories,
                    ListItemCategoriesRequest(categoryGroupID: MemoryStore.groupID)),
            payload("update-item-category", ItemCategoryMethods.updateItemCategory,
                    UpdateItemCategoryRequest(itemCategory: ItemCategory(
                        id: MemoryStore.categoryID, categoryGroupID: MemoryStore.emptyGroupID),
                                              updateMask: ["category_group_id"])),
            payload("delete-item-category", ItemCategoryMethods.deleteItemCategory,
                    DeleteItemCategoryRequest(id: MemoryStore.categoryID)),
            payload("create-location", LocationMethods.createLocation,
                    CreateLocationRequest(location: Location(id: uuid.uppercased(), name: "玄關", colorHex: "#aabbcc"))),
            payload("get-location", LocationMethods.getLocation, GetLocationRequest(id: MemoryStore.locationID)),
            payload("list-locations", LocationMethods.listLocations, ListLocationsRequest()),
            payload("update-location", LocationMethods.updateLocation,
                    UpdateLocationRequest(location: Location(id: MemoryStore.locationID, name: " Shelf ",
                                                             colorHex: "#010203"))),
            payload("delete-location", LocationMethods.deleteLocation,
                    DeleteLocationRequest(id: MemoryStore.locationID)),
            payload("create-meal", MealRecordMethods.createMealRecord, CreateMealRecordRequest(mealRecord: meal)),
            payload("get-meal", MealRecordMethods.getMealRecord, GetMealRecordRequest(id: MemoryStore.mealIDs[0])),
            payload("list-meals", MealRecordMethods.listMealRecords,
                    ListMealRecordsRequest(pageSize: 2, startTime: Timestamp(seconds: 0),
                                           endTime: Timestamp(seconds: 1_800_000_000), category: .unspecified)),
            payload("update-meal", MealRecordMethods.updateMealRecord,
                    UpdateMealRecordRequest(mealRecord: MealRecord(id: MemoryStore.mealIDs[1], calories: 1),
                                            updateMask: ["calories"])),
            payload("delete-meal", MealRecordMethods.deleteMealRecord,
                    DeleteMealRecordRequest(id: MemoryStore.mealIDs[2])),
            payload("summarize", MealRecordMethods.summarizeMealRecords,
                    SummarizeMealRecordsRequest(startTime: Timestamp(seconds: 1_716_900_000),
                                                endTime: Timestamp(seconds: 1_717_200_000), utcOffsetMinutes: 540)),
            payload("health", HealthMethods.check, HealthCheckRequest(service: "larder.v1.LocationService")),
            payload("list-services", ReflectionMethods.listServices, ListServicesRequest()),
            payload("describe-type", ReflectionMethods.describeType, DescribeTypeRequest(name: "larder.v1.MealRecord")),
            payload("get-metrics", AdminMethods.getMetrics, GetMetricsRequest()),
            payload("get-server-info", AdminMethods.getServerInfo, GetServerInfoRequest()),
            payload("health-watch", HealthMethods.watch.path, ProtoCodec.encode(HealthCheckRequest(service: ""))),
            payload("reflection-v1-symbol", GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path,
                    ProtoCodec.encode(GrpcReflectionV1ServerReflectionRequest(
                        messageRequest: .fileContainingSymbol("larder.v1.LocationService")))),
            payload("reflection-v1alpha-list", GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo.path,
                    ProtoCodec.encode(GrpcReflectionV1alphaServerReflectionRequest(messageRequest: .listServices("")))),
        ]
        // Hostile values, through real field numbers.
        let createLocation = LocationMethods.createLocation.path
        let locationName = { (bytes: [UInt8]) in field(1, field(2, bytes) + field(3, text("#aabbcc"))) }
        seeds += [
            payload("name-invalid-utf8", createLocation, locationName([0x41, 0xFF, 0xC3, 0x28])),
            payload("name-nul-byte", createLocation, locationName(text("Pan") + [0] + text("try"))),
            payload("name-sql-injection", createLocation, locationName(text("'); DROP TABLE locations; --"))),
            payload("name-control-chars", createLocation, locationName(text("a\u{7}b\u{1B}[2J"))),
            payload("name-whitespace-only", createLocation, locationName(text(" \t\u{3000}\n"))),
            payload("name-too-long", createLocation, locationName(text(String(repeating: "長", count: 101)))),
            payload("name-combining", createLocation, locationName(text("e" + String(repeating: "\u{301}", count: 300)))),
            payload("name-bidi", createLocation, locationName(text("\u{202E}gnp.exe"))),
            payload("id-not-uuid", LocationMethods.getLocation.path, field(1, text("../../etc/passwd"))),
            payload("id-wrong-wire-type", LocationMethods.getLocation.path, field(1, varint: 12345)),
            payload("location-as-varint", createLocation, field(1, varint: 1)),
            payload("truncated", createLocation, Array(locationName(text("Pantry")).dropLast(3))),
            payload("overlong-varint", MealRecordMethods.listMealRecords.path,
                    [0x08] + [UInt8](repeating: 0xFF, count: 11)),
            payload("page-size-negative", MealRecordMethods.listMealRecords.path,
                    field(1, varint: UInt64(bitPattern: -5))),
            payload("page-size-huge", MealRecordMethods.listMealRecords.path, field(1, varint: 0x7FFF_FFFF)),
            payload("page-token-garbage", MealRecordMethods.listMealRecords.path, field(2, text("!!notbase64~~"))),
            payload("page-token-base64", MealRecordMethods.listMealRecords.path,
                    field(2, text("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))),
            payload("timestamp-extremes", MealRecordMethods.listMealRecords.path,
                    field(3, field(1, varint: UInt64(bitPattern: Int64.min)) + field(2, varint: UInt64(bitPattern: -1)))
                    + field(4, field(1, varint: UInt64(Int64.max)))),
            payload("summary-year-range", MealRecordMethods.summarizeMealRecords.path,
                    field(1, field(1, varint: UInt64(bitPattern: -62_135_596_800)))
                    + field(2, field(1, varint: 253_402_300_799)) + field(3, varint: UInt64(bitPattern: -840))),
            payload("meal-unknown-category", MealRecordMethods.createMealRecord.path,
                    field(1, field(2, text("Soup")) + field(4, varint: 99))),
            payload("meal-calories-negative", MealRecordMethods.createMealRecord.path,
                    field(1, field(2, text("Soup")) + field(3, varint: UInt64(bitPattern: -1)) + field(4, varint: 1))),
            payload("mask-unknown-path", LocationMethods.updateLocation.path,
                    field(1, field(1, text(MemoryStore.locationID))) + field(2, field(1, text("create_time")))),
        ]
        // Repeated and nested fields: a group carrying 500 item categories, a mask repeating one path.
        let nested = (0..<500).map { field(6, field(2, text("c\($0)")) + field(5, field(1, varint: UInt64($0)))) }
        seeds.append(payload("group-many-nested-categories", CategoryGroupMethods.updateCategoryGroup.path,
                             field(1, field(1, text(MemoryStore.groupID)) + field(2, text("Food")) + nested.flatMap { $0 })))
        seeds.append(payload("mask-repeated-path", LocationMethods.updateLocation.path,
                             field(1, field(1, text(MemoryStore.locationID)) + field(2, text("x")))
                                + field(2, Array(repeating: field(1, text("name")), count: 200).flatMap { $0 })))
        seeds.append(payload("repeated-scalar-field", LocationMethods.getLocation.path,
                             Array(repeating: field(1, text(MemoryStore.locationID)), count: 100).flatMap { $0 }))
        // Just past the server's DecodeLimits: 1,001 mask paths, 101 unknown fields, an update
        // mask (a message field that is not repeated) written 9 times.
        seeds.append(payload("limits-mask-paths", LocationMethods.updateLocation.path,
                             field(1, field(1, text(MemoryStore.locationID)) + field(2, text("x")))
                                + field(2, Array(repeating: field(1, []), count: 1001).flatMap { $0 })))
        seeds.append(payload("limits-unknown-fields", LocationMethods.listLocations.path,
                             (0..<101).flatMap { field(100 + $0, varint: 1) }))
        seeds.append(payload("limits-message-field-repeats", MealRecordMethods.updateMealRecord.path,
                             Array(repeating: field(2, field(1, text("name"))), count: 9).flatMap { $0 }))
        return seeds
    }

    // MARK: - Envelopes

    static var envelopes: [Seed] {
        var seeds: [Seed] = []
        for (index, method) in PayloadMethods.all.enumerated() {
            let request = payloads.first { $0.bytes.first == UInt8(index) }.map { Array($0.bytes.dropFirst()) } ?? []
            let parts = method.path.split(separator: "/")
            var name = "valid-" + (parts.last.map(String.init) ?? "method")
            // Two versions of one service (grpc.reflection.v1 and v1alpha): the package's last part tells them apart.
            if seeds.contains(where: { $0.name == name }), let version = parts.first?.split(separator: ".").dropLast().last {
                name += "-\(version)"
            }
            seeds.append(Seed(name: name, bytes: envelope(UInt64(index + 1), method.path, request)))
        }
        let health = HealthMethods.check.path
        seeds += [
            Seed(name: "empty", bytes: []),
            Seed(name: "deadline-and-token", bytes: envelope(7, LocationMethods.listLocations.path, [],
                                                             timeout: 1500, metadata: ["authorization": "Bearer s3cret"])),
            Seed(name: "call-id-zero", bytes: field(2, text(health))),
            Seed(name: "call-id-max", bytes: field(1, varint: .max) + field(2, text(health))),
            Seed(name: "method-invalid-utf8", bytes: field(1, varint: 1) + field(2, [0x2F, 0xC0, 0xAF, 0x2F])),
            Seed(name: "method-nul-byte", bytes: field(1, varint: 1) + field(2, text(health) + [0] + text("x"))),
            Seed(name: "method-wrong-wire-type", bytes: field(1, varint: 1) + field(2, varint: 5)),
            Seed(name: "call-id-wrong-wire-type", bytes: field(1, text("1")) + field(2, text(health))),
            Seed(name: "timeout-fixed32", bytes: field(1, varint: 1) + [0x25, 1, 2, 3, 4]),
            Seed(name: "start-group", bytes: field(1, varint: 1) + [0x0B, 0x0C]),
            Seed(name: "truncated", bytes: Array(envelope(3, health, [1, 2, 3]).dropLast(2))),
            Seed(name: "length-past-end", bytes: [0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x41]),
            Seed(name: "overlong-varint", bytes: [0x08] + [UInt8](repeating: 0x80, count: 10) + [0x01]),
            Seed(name: "metadata-uppercase-keys", bytes: envelope(4, health, [],
                                                                  metadata: ["Authorization": "a", "X-Trace": "b"])),
            Seed(name: "metadata-key-only", bytes: field(1, varint: 1) + field(5, field(1, text("k")))),
            Seed(name: "metadata-invalid-utf8", bytes: field(1, varint: 1) + field(5, field(1, text("k")) + field(2, [0xED, 0xA0, 0x80]))),
            Seed(name: "metadata-many", bytes: field(1, varint: 1)
                    + (0..<300).flatMap { field(5, field(1, text("k\($0 % 7)")) + field(2, text("v\($0)"))) }),
            Seed(name: "method-repeated", bytes: field(1, varint: 1)
                    + Array(repeating: field(2, text(health)), count: 100).flatMap { $0 }),
            Seed(name: "unknown-fields", bytes: field(1, varint: 1) + field(2, text(health))
                    + field(15, field(1, field(1, field(1, text("deep"))))) + field(1000, varint: 3)),
            Seed(name: "limits-metadata-bytes", bytes: field(1, varint: 1)
                    + (0..<200).flatMap { field(5, field(1, text("key\($0)")) + field(2, text("value"))) }),
            Seed(name: "limits-fields", bytes: Array(repeating: field(1, varint: 1), count: 10_001).flatMap { $0 }),
            Seed(name: "response-envelope", bytes: ProtoCodec.encode(ResponseEnvelope(
                callID: 9, statusCode: .invalidArgument, statusMessage: "id must be a UUID"))),
        ]
        return seeds
    }

    // MARK: - Frames: byte 0 picks the size limit, byte 1 the piece sizes

    static var frames: [Seed] {
        let defaultLimit = UInt8(FrameFuzzer.maxFrameSizes.firstIndex(of: Frame.defaultMaxSize) ?? 0)
        let health = envelope(1, HealthMethods.check.path, [])
        let list = envelope(2, LocationMethods.listLocations.path, [], timeout: 100)
        func stream(_ limit: UInt8, _ seed: UInt8, _ bytes: [UInt8]) -> [UInt8] { [limit, seed] + bytes }
        return [
            Seed(name: "two-frames", bytes: stream(defaultLimit, 1, Frame.encode(health) + Frame.encode(list))),
            Seed(name: "many-small-frames", bytes: stream(4, 7, (0..<40).flatMap { Frame.encode([UInt8]($0..<($0 + 5))) })),
            Seed(name: "empty-frames", bytes: stream(0, 3, [UInt8](repeating: 0, count: 40))),
            Seed(name: "truncated-header", bytes: stream(defaultLimit, 0, [0, 0, 0])),
            Seed(name: "truncated-body", bytes: stream(defaultLimit, 2, [0, 0, 0, 100] + [UInt8](repeating: 0x41, count: 10))),
            Seed(name: "giant-length", bytes: stream(defaultLimit, 0, [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])),
            Seed(name: "just-over-limit", bytes: stream(defaultLimit, 5, [0x00, 0x40, 0x00, 0x01] + health)),
            Seed(name: "at-small-limit", bytes: stream(3, 9, Frame.encode([UInt8](repeating: 7, count: 16))
                                                       + Frame.encode([UInt8](repeating: 8, count: 17)))),
            Seed(name: "http-request", bytes: stream(defaultLimit, 4, text("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))),
            Seed(name: "tls-client-hello", bytes: stream(defaultLimit, 6, [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC])),
            Seed(name: "frame-then-garbage", bytes: stream(defaultLimit, 8, Frame.encode(health) + [0x7F, 0xFF, 0xFF, 0xFF])),
        ]
    }
}
