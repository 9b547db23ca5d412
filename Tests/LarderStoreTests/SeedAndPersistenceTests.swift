import Foundation
import LarderAPI
import LarderSQLite
import LarderStore
import LarderWire
import Testing

/// Default data, reopening, and opening errors.
@Suite struct SeedAndPersistenceTests {
    static let groups: [(String, String, [(String, String)])] = [
        ("食品", "#34C759", [("食品", "carrot.fill"), ("蔬果", "leaf.fill"), ("飲品", "cup.and.saucer.fill"),
                             ("酒", "wineglass.fill")]),
        ("電器", "#007AFF", [("電器", "lightbulb.fill")]),
        ("家具", "#763300", [("家具", "bed.double.fill")]),
        ("消耗", "#253705", [("消耗品", "minus.plus.batteryblock.stack.fill"), ("清潔用品", "hands.and.sparkles")]),
        ("衛生", "#900C3F", [("衛生用品", "bandage.fill")]),
        ("護理", "#E6B800", [("面膜", "face.smiling")]),
        ("運動", "#2D3B5E", [("腳踏車", "bicycle")]),
        ("文具", "#F04AA7", [("文具", "pencil")]),
        ("寵物", "#AF52DE", []),
    ]
    static let locations = [("客廳", "#FF5733"), ("廚房", "#33B5FF"), ("臥室", "#28A745"), ("浴室", "#FFC107")]

    @Test(arguments: Backend.all)
    func newDatabaseHoldsExactlyTheDefaults(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: true)
        let groups = try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest()).categoryGroups
        #expect(groups.count == Self.groups.count)
        for (name, color, categories) in Self.groups {
            let group = try #require(groups.first { $0.name == name })
            #expect(Array(group.name.utf8) == Array(name.utf8))
            #expect(group.colorHex == color)
            let full = try db.read(Operations.getCategoryGroup,
                                   GetCategoryGroupRequest(id: group.id, includeItemCategories: true))
            #expect(Set(full.itemCategories.map { "\($0.name) \($0.iconName)" })
                == Set(categories.map { "\($0.0) \($0.1)" }))
        }
        let locations = try db.read(Operations.listLocations, ListLocationsRequest()).locations
        #expect(Set(locations.map { "\($0.name) \($0.colorHex)" }) == Set(Self.locations.map { "\($0.0) \($0.1)" }))
        #expect(try db.read(Operations.listItemCategories, ListItemCategoriesRequest()).itemCategories.count == 12)
        #expect(rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: "客廳", colorHex: "#000000")))
        } == RPCError(.alreadyExists, "location name \"客廳\" already exists"))
    }

    @Test(arguments: Backend.all)
    func seedingHappensOnlyWhenTheDatabaseIsCreated(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: true)
        let livingRoom = try #require(
            try db.read(Operations.listLocations, ListLocationsRequest()).locations.first { $0.name == "客廳" })
        _ = try db.write(Operations.deleteLocation, DeleteLocationRequest(id: livingRoom.id))
        try db.reopen(seed: true)
        let names = try db.read(Operations.listLocations, ListLocationsRequest()).locations.map(\.name)
        #expect(Set(names) == ["廚房", "臥室", "浴室"])
        #expect(try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest()).categoryGroups.count == 9)
    }

    @Test(arguments: Backend.all)
    func seedFalseLeavesTheDatabaseEmptyForGood(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: false)
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.isEmpty)
        try db.reopen(seed: true)
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.isEmpty)
        #expect(try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest()).categoryGroups.isEmpty)
    }

    @Test(arguments: Backend.all)
    func dataSurvivesCloseAndReopen(backend: Backend) throws {
        let db = try TestDatabase(backend, durability: .full)
        let name = "冰箱 🧊 ｜ Fridge"
        let location = try db.write(Operations.createLocation,
                                    CreateLocationRequest(location: Location(name: name, colorHex: "#abcdef")))
        let group = try db.write(Operations.createCategoryGroup,
                                 CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "零食", colorHex: "#123456")))
        let category = try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
            itemCategory: ItemCategory(name: "餅乾", iconName: "takeoutbag.and.cup.and.straw.fill", categoryGroupID: group.id)))
        let meal = try db.write(Operations.createMealRecord, CreateMealRecordRequest(
            mealRecord: MealRecord(name: "拉麵", calories: 650, category: .dinner)))
        try db.reopen()
        let stored = try db.read(Operations.getLocation, GetLocationRequest(id: location.id))
        #expect(stored == location)
        #expect(Array(stored.name.utf8) == Array(name.utf8))
        #expect(try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: category.id)) == category)
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: meal.id)) == meal)
        if backend == .sqlite {
            // close() checkpoints: the WAL is empty afterwards.
            db.store.close()
            let wal = (try? FileManager.default.attributesOfItem(atPath: db.path + "-wal")[.size] as? Int) ?? 0
            #expect(wal == 0)
        }
    }

    @Test func missingDirectoryIsAClearError() {
        let path = "/nonexistent-larder-dir/sub/db.sqlite"
        let error = rpcError { try SQLiteStore.openAfterClose(path: path, options: .init()) }
        #expect(error == RPCError(.invalidArgument,
                                  "cannot open database \"\(path)\": directory \"/nonexistent-larder-dir/sub\" does not exist"))
    }

    /// Not SQLite's at all: a wrong path (FAILED_PRECONDITION); SQLite's header over a damaged
    /// rest: a damaged database (DATA_LOSS).
    @Test func aFileThatIsNotADatabaseIsRejected() throws {
        let db = try TestDatabase()
        let path = db.directory.appendingPathComponent("junk.sqlite").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let error = rpcError { try SQLiteStore.openAfterClose(path: path, options: .init()) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message.contains(path) == true && error?.message.contains("not a SQLite database") == true)

        try Data(Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0x41, count: 4080)).write(to: URL(fileURLWithPath: path))
        let damaged = rpcError { try SQLiteStore.openAfterClose(path: path, options: .init()) }
        #expect(damaged?.code == .dataLoss, "\(String(describing: damaged))")
        #expect(damaged?.message.contains(path) == true)
    }

    @Test func readOnlyOpenReadsButRefusesWrites() throws {
        let db = try TestDatabase(seed: true)
        db.store.close()
        let store = try SQLiteStore.openAfterClose(path: db.path, options: .init(readOnly: true))
        defer { store.close() }
        let reads = Waiter<ListLocationsResponse>()
        store.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) },
                   completion: reads.finish)
        #expect(try reads.wait().get().locations.count == 4)
        let writes = Waiter<Location>()
        store.write({ w throws(RPCError) in
            try Operations.createLocation(CreateLocationRequest(location: Location(name: "X", colorHex: "#000000")), w)
        }, completion: writes.finish)
        #expect(rpcError { try writes.wait().get() }?.code == .failedPrecondition)
    }
}
