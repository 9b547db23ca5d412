import LarderAPI
import LarderStore
import LarderWire
import Testing

/// Field rules, checked through Operations on a real database.
@Suite struct ValidationTests {
    static let badNames: [(String, String)] = [
        ("", "location.name is required: it must not be empty or only whitespace"),
        (" \n\t ", "location.name is required: it must not be empty or only whitespace"),
        (String(repeating: "a", count: 101), "location.name must be at most 100 characters after trimming, got 101"),
        ("bad\u{0}name", "location.name must not contain control characters"),
        ("tab\tinside", "location.name must not contain control characters"),
        ("esc\u{1B}", "location.name must not contain control characters"),
        ("del\u{7F}", "location.name must not contain control characters"),
        ("\u{1F}lead", "location.name must not contain control characters"),
        ("c1\u{85}inside", "location.name must not contain control characters"),
        ("\u{3000}\u{3000}", "location.name is required: it must not be empty or only whitespace"),
    ]

    static let trimmedNames: [(String, String)] = [
        ("plain", "plain"), (" padded ", "padded"), ("\r\nlines\n", "lines"), ("\u{3000}客廳\u{3000}", "客廳"),
        ("\u{85}next line", "next line"), ("a b", "a b"), ("e\u{301}", "e\u{301}"),
    ]

    @Test(arguments: trimmedNames)
    func namesAreTrimmed(raw: String, stored: String) throws {
        let db = try TestDatabase()
        let location = try db.write(Operations.createLocation,
                                    CreateLocationRequest(location: Location(name: raw, colorHex: "#000000")))
        #expect(Array(location.name.utf8) == Array(stored.utf8))
        #expect(Array(try db.read(Operations.getLocation, GetLocationRequest(id: location.id)).name.utf8)
            == Array(stored.utf8))
    }

    @Test(arguments: badNames)
    func badLocationNamesAreRejected(name: String, message: String) throws {
        let db = try TestDatabase()
        let error = rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: name, colorHex: "#000000")))
        }
        #expect(error == RPCError(.invalidArgument, message))
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.isEmpty)
    }

    /// A name is refused on its raw size, before it is trimmed (which walks every scalar:
    /// 0.12 s of the writer for the 4 MiB of U+3000 below): the message says "before trimming",
    /// not what trimming would have found. Up to the raw cap, whitespace is trimmed as ever.
    @Test func namesOverFourTimesTheirCapAreRefusedBeforeTrimming() throws {
        let db = try TestDatabase()
        let atCap = String(repeating: " ", count: 800) + "x" + String(repeating: " ", count: 799)
        #expect(atCap.utf8.count == 1600)
        let location = try db.write(Operations.createLocation,
                                    CreateLocationRequest(location: Location(name: atCap, colorHex: "#000000")))
        #expect(location.name == "x")

        let refusals: [(String, Int)] = [
            (atCap + " ", 1601),
            (String(repeating: "\u{3000}", count: 1_390_000) + "x", 4_170_001),  // whitespace around one letter
            (String(repeating: "a", count: 4_000_000), 4_000_000),
            (String(repeating: "\u{0}", count: 2000), 2000),  // control characters are not looked at either
        ]
        for (name, bytes) in refusals {
            let message = "is \(bytes) bytes of UTF-8, more than the 1600 a name may have before trimming (at most 400 after)"
            let create = rpcError {
                try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: name, colorHex: "#000000")))
            }
            let meal = rpcError {
                try db.write(Operations.createMealRecord, CreateMealRecordRequest(
                    mealRecord: MealRecord(name: name, calories: 1, category: .lunch)))
            }
            let update = rpcError {
                try db.write(Operations.updateLocation, UpdateLocationRequest(
                    location: Location(id: location.id, name: name), updateMask: FieldMask(paths: ["name"])))
            }
            #expect(create == RPCError(.invalidArgument, "location.name " + message))
            #expect(meal == RPCError(.invalidArgument, "meal_record.name " + message))
            #expect(update == RPCError(.invalidArgument, "location.name " + message))
        }
        let names = try db.read(Operations.listLocations, ListLocationsRequest()).locations.map(\.name)
        #expect(names == ["x"])
    }

    /// The other string fields are refused on their size before any walk over them (their
    /// rules fix a length), and the message gives that size.
    @Test func hugeColorsIconsAndIDsAreRefusedOnTheirSize() throws {
        let db = try TestDatabase()
        let huge = String(repeating: "\u{3000}", count: 1_390_000)
        let group = try db.write(Operations.createCategoryGroup,
                                 CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "G", colorHex: "#000000")))
        let errors: [(String, RPCError?)] = [
            ("location.color_hex must be #RRGGBB, got \"", rpcError {
                try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: "L", colorHex: huge)))
            }),
            ("item_category.icon_name must be 1-100 characters of A-Z, a-z, 0-9 and \".\", got \"", rpcError {
                try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
                    itemCategory: ItemCategory(name: "C", iconName: huge, categoryGroupID: group.id)))
            }),
            ("item_category.category_group_id must be a UUID, got \"", rpcError {
                try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
                    itemCategory: ItemCategory(name: "C", iconName: "leaf", categoryGroupID: huge)))
            }),
            ("id must be a UUID, got \"", rpcError { try db.read(Operations.getLocation, GetLocationRequest(id: huge)) }),
        ]
        for (prefix, error) in errors {
            #expect(error?.code == .invalidArgument, "\(prefix)")
            #expect(error?.message.hasPrefix(prefix) == true, "\(error?.message.prefix(80) ?? "accepted")")
            #expect(error?.message.hasSuffix("…\" (4170000 bytes)") == true, "\(error?.message.suffix(40) ?? "")")
        }
    }

    @Test(arguments: Backend.all)
    func hundredCJKCharactersAreAccepted(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let name = String(repeating: "櫃", count: 100)
        let location = try db.write(Operations.createLocation,
                                    CreateLocationRequest(location: Location(name: name, colorHex: "#000000")))
        #expect(Array(location.name.utf8) == Array(name.utf8))
        let stored = try db.read(Operations.getLocation, GetLocationRequest(id: location.id))
        #expect(Array(stored.name.utf8) == Array(name.utf8))
    }

    @Test(arguments: ["red", "", "#12345", "#1234567", "123456#", "#GG0000", "＃123456", "#12 456"])
    func badColorsAreRejected(color: String) throws {
        let db = try TestDatabase()
        let error = rpcError {
            try db.write(Operations.createCategoryGroup,
                         CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "G", colorHex: color)))
        }
        #expect(error == RPCError(.invalidArgument, "category_group.color_hex must be #RRGGBB, got \"\(color)\""))
    }

    @Test(arguments: ["", "leaf fill", "leaf-fill", "葉", "leaf/fill", String(repeating: "a", count: 101)])
    func badIconNamesAreRejected(icon: String) throws {
        let db = try TestDatabase()
        let group = try db.write(Operations.createCategoryGroup,
                                 CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "G", colorHex: "#000000")))
        let error = rpcError {
            try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
                itemCategory: ItemCategory(name: "C", iconName: icon, categoryGroupID: group.id)))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("item_category.icon_name must be 1-100 characters") == true)
    }

    @Test(arguments: Backend.all)
    func clientIDsAreNormalizedAndDuplicatesRejected(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let upper = "0F8E6D2C-3B1A-4C5D-9E8F-7A6B5C4D3E2F"
        let location = try db.write(Operations.createLocation,
                                    CreateLocationRequest(location: Location(id: upper, name: "A", colorHex: "#000000")))
        #expect(location.id == upper.lowercased())
        #expect(try db.read(Operations.getLocation, GetLocationRequest(id: upper)).id == upper.lowercased())

        let duplicate = rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(
                location: Location(id: upper.lowercased(), name: "B", colorHex: "#000000")))
        }
        #expect(duplicate == RPCError(.alreadyExists, "location id \"\(upper.lowercased())\" already exists"))
    }

    /// Any 8-4-4-4-12 hex UUID is an id, whatever its version and variant (the server makes
    /// version 4 ones); braces, a urn: prefix or surrounding spaces are not.
    @Test func idsOfAnyUUIDVersionAreAcceptedInTheCanonicalFormOnly() throws {
        let db = try TestDatabase()
        for (index, id) in ["6ba7b810-9dad-11d1-80b4-00c04fd430c8", "00000000-0000-0000-0000-000000000000",
                            "01890a5d-ac96-774b-bcce-b302099a8057", "ffffffff-ffff-ffff-ffff-ffffffffffff"].enumerated() {
            let location = try db.write(Operations.createLocation, CreateLocationRequest(
                location: Location(id: id.uppercased(), name: "L\(index)", colorHex: "#000000")))
            #expect(location.id == id)
        }
        for id in ["{6ba7b810-9dad-11d1-80b4-00c04fd430c8}", "urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
                   " 6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b810-9dad-11d1-80b4-00c04fd430c8 "] {
            #expect(rpcError { try db.read(Operations.getLocation, GetLocationRequest(id: id)) }?.code == .invalidArgument)
        }
    }

    /// Names are unique as stored: trimmed, then byte for byte (case-sensitive, no Unicode
    /// normalization).
    @Test(arguments: Backend.all)
    func namesAreUniqueAfterTrimmingByteForByte(backend: Backend) throws {
        let db = try TestDatabase(backend)
        for name in ["Attic", "attic", "ATTIC", "Caf\u{E9}", "Cafe\u{301}"] {
            _ = try db.write(Operations.createLocation,
                             CreateLocationRequest(location: Location(name: name, colorHex: "#000000")))
        }
        let trimmed = rpcError {
            try db.write(Operations.createLocation,
                         CreateLocationRequest(location: Location(name: " Attic\u{3000}", colorHex: "#000000")))
        }
        #expect(trimmed == RPCError(.alreadyExists, "location name \"Attic\" already exists"))
    }

    @Test(arguments: ["not-a-uuid", "0f8e6d2c3b1a4c5d9e8f7a6b5c4d3e2f", "0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2g",
                      "'); DROP TABLE locations; --"])
    func malformedIDsAreInvalid(id: String) throws {
        let db = try TestDatabase()
        #expect(rpcError { try db.read(Operations.getLocation, GetLocationRequest(id: id)) }
            == RPCError(.invalidArgument, "id must be a UUID, got \"\(id)\""))
        #expect(rpcError { try db.write(Operations.deleteMealRecord, DeleteMealRecordRequest(id: id)) }?.code
            == .invalidArgument)
        #expect(rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: Location(id: id, name: "A", colorHex: "#000000")))
        }?.code == .invalidArgument)
    }

    @Test func emptyIDsAreRequired() throws {
        let db = try TestDatabase()
        #expect(rpcError { try db.read(Operations.getLocation, GetLocationRequest(id: "")) }
            == RPCError(.invalidArgument, "id is required"))
        #expect(rpcError { try db.read(Operations.getCategoryGroup, GetCategoryGroupRequest(id: "")) }
            == RPCError(.invalidArgument, "id is required"))
        #expect(rpcError { try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: "")) }
            == RPCError(.invalidArgument, "id is required"))
        #expect(rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: "")) }
            == RPCError(.invalidArgument, "id is required"))
        #expect(rpcError { try db.write(Operations.deleteLocation, DeleteLocationRequest(id: "")) }
            == RPCError(.invalidArgument, "id is required"))
        #expect(rpcError {
            try db.write(Operations.updateLocation, UpdateLocationRequest(location: Location(name: "A", colorHex: "#000000")))
        } == RPCError(.invalidArgument, "location.id is required"))
    }

    @Test(arguments: Backend.all)
    func missingEntitiesAreNotFound(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let id = StoreID.generate()
        #expect(rpcError { try db.read(Operations.getLocation, GetLocationRequest(id: id)) }
            == RPCError(.notFound, "location \"\(id)\" not found"))
        #expect(rpcError { try db.read(Operations.getCategoryGroup, GetCategoryGroupRequest(id: id)) }
            == RPCError(.notFound, "category group \"\(id)\" not found"))
        #expect(rpcError { try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: id)) }
            == RPCError(.notFound, "item category \"\(id)\" not found"))
        #expect(rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: id)) }
            == RPCError(.notFound, "meal record \"\(id)\" not found"))
        #expect(rpcError { try db.write(Operations.deleteLocation, DeleteLocationRequest(id: id)) }?.code == .notFound)
        #expect(rpcError { try db.write(Operations.deleteCategoryGroup, DeleteCategoryGroupRequest(id: id)) }?.code
            == .notFound)
        #expect(rpcError { try db.write(Operations.deleteItemCategory, DeleteItemCategoryRequest(id: id)) }?.code
            == .notFound)
        #expect(rpcError { try db.write(Operations.deleteMealRecord, DeleteMealRecordRequest(id: id)) }?.code
            == .notFound)
        #expect(rpcError {
            try db.write(Operations.updateLocation, UpdateLocationRequest(location: Location(id: id, name: "A", colorHex: "#000000")))
        } == RPCError(.notFound, "location \"\(id)\" not found"))
        #expect(rpcError {
            try db.write(Operations.updateMealRecord, UpdateMealRecordRequest(
                mealRecord: MealRecord(id: id, name: "A"), updateMask: ["name"]))
        }?.code == .notFound)
    }

    /// Across several refills of the pool of random bytes (256 ids each): no id repeats.
    @Test func generatedIDsAreLowercaseVersion4AndDistinct() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = StoreID.generate()
            #expect(StoreID.normalized(id) == id)
            let chars = Array(id)
            #expect(chars[14] == "4")
            #expect("89ab".contains(chars[19]))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }
}
