import LarderAPI
import LarderStore
import LarderWire
import Testing

@Suite struct LocationTests {
    @Test(arguments: Backend.all)
    func createGetListUpdateDelete(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let created = try db.write(Operations.createLocation,
                                   CreateLocationRequest(location: Location(name: "  玄關\n", colorHex: "#aabbcc")))
        #expect(created.name == "玄關")
        #expect(created.colorHex == "#AABBCC")
        #expect(StoreID.normalized(created.id) == created.id)
        #expect(created.createTime != nil && created.createTime == created.updateTime)

        let fetched = try db.read(Operations.getLocation, GetLocationRequest(id: created.id))
        #expect(fetched == created)
        #expect(Array(fetched.name.utf8) == Array("玄關".utf8))

        let list = try db.read(Operations.listLocations, ListLocationsRequest())
        #expect(list.locations == [created])

        let updated = try db.write(Operations.updateLocation, UpdateLocationRequest(
            location: Location(id: created.id, name: "ignored", colorHex: "#010203"), updateMask: ["color_hex"]))
        #expect(updated.name == "玄關")
        #expect(updated.colorHex == "#010203")
        #expect(updated.createTime == created.createTime)
        #expect(try #require(updated.updateTime) >= #require(created.updateTime))
        #expect(try db.read(Operations.getLocation, GetLocationRequest(id: created.id)) == updated)

        _ = try db.write(Operations.deleteLocation, DeleteLocationRequest(id: created.id))
        let missing = rpcError { try db.read(Operations.getLocation, GetLocationRequest(id: created.id)) }
        #expect(missing == RPCError(.notFound, "location \"\(created.id)\" not found"))
    }

    @Test(arguments: Backend.all)
    func emptyMaskReplacesEveryMutableField(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let created = try db.write(Operations.createLocation,
                                   CreateLocationRequest(location: Location(name: "A", colorHex: "#000000")))
        let updated = try db.write(Operations.updateLocation,
                                   UpdateLocationRequest(location: Location(id: created.id, name: "B", colorHex: "#ffffff")))
        #expect(updated.name == "B" && updated.colorHex == "#FFFFFF" && updated.createTime == created.createTime)
        #expect(try db.read(Operations.getLocation, GetLocationRequest(id: created.id)) == updated)
    }

    @Test(arguments: Backend.all, ["id", "create_time", "update_time", "colour", "location.name"])
    func unknownOrImmutablePathsAreRejected(backend: Backend, path: String) throws {
        let db = try TestDatabase(backend)
        let created = try db.write(Operations.createLocation,
                                   CreateLocationRequest(location: Location(name: "A", colorHex: "#000000")))
        let error = rpcError {
            try db.write(Operations.updateLocation, UpdateLocationRequest(
                location: Location(id: created.id, name: "B", colorHex: "#000000"), updateMask: ["name", .init(path)]))
        }
        #expect(error == RPCError(.invalidArgument,
                                  "update_mask path \"\(path)\" cannot be updated; allowed paths: name, color_hex"))
        #expect(try db.read(Operations.getLocation, GetLocationRequest(id: created.id)).name == "A")
    }

    @Test(arguments: Backend.all)
    func duplicateNamesAreAlreadyExists(backend: Backend) throws {
        let db = try TestDatabase(backend)
        _ = try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: "客廳", colorHex: "#000000")))
        let other = try db.write(Operations.createLocation,
                                 CreateLocationRequest(location: Location(name: "廚房", colorHex: "#000000")))
        #expect(rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: " 客廳 ", colorHex: "#111111")))
        } == RPCError(.alreadyExists, "location name \"客廳\" already exists"))
        #expect(rpcError {
            try db.write(Operations.updateLocation, UpdateLocationRequest(
                location: Location(id: other.id, name: "客廳"), updateMask: ["name"]))
        } == RPCError(.alreadyExists, "location name \"客廳\" already exists"))
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.map(\.name).sorted()
            == ["客廳", "廚房"].sorted())
    }

    /// A create repeating both an existing id and an existing name names the id on every
    /// backend (SQLite's engine finds the name first, PostgreSQL's the id; a parity audit
    /// found the two messages differ); a taken name alone still names the name.
    @Test(arguments: Backend.all)
    func anIDAndANameBothTakenNameTheIDOnEveryBackend(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let location = try db.write(Operations.createLocation,
                                    CreateLocationRequest(location: Location(name: "Pantry", colorHex: "#000000")))
        #expect(rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: location))
        } == RPCError(.alreadyExists, "location id \"\(location.id)\" already exists"))
        let group = try db.write(Operations.createCategoryGroup,
                                 CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "Food", colorHex: "#000000")))
        #expect(rpcError {
            try db.write(Operations.createCategoryGroup, CreateCategoryGroupRequest(categoryGroup: group))
        } == RPCError(.alreadyExists, "category group id \"\(group.id)\" already exists"))
        let category = try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
            itemCategory: ItemCategory(name: "Fruit", iconName: "leaf", categoryGroupID: group.id)))
        #expect(rpcError {
            try db.write(Operations.createItemCategory, CreateItemCategoryRequest(itemCategory: category))
        } == RPCError(.alreadyExists, "item category id \"\(category.id)\" already exists"))
        // The name alone, with a new id: the name.
        var renamed = location
        renamed.id = "0b6f2c1e-9a4d-4c3b-8e2f-5d7a1b9c0e3f"
        #expect(rpcError {
            try db.write(Operations.createLocation, CreateLocationRequest(location: renamed))
        } == RPCError(.alreadyExists, "location name \"Pantry\" already exists"))
    }

    @Test(arguments: Backend.all)
    func hostileNamesAreStoredVerbatim(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let hostile = "'); DROP TABLE locations; --"
        let created = try db.write(Operations.createLocation,
                                   CreateLocationRequest(location: Location(name: hostile, colorHex: "#000000")))
        #expect(created.name == hostile)
        let list = try db.read(Operations.listLocations, ListLocationsRequest())
        #expect(list.locations.map(\.name) == [hostile])
    }

    @Test(arguments: Backend.all)
    func listIsSortedByName(backend: Backend) throws {
        let db = try TestDatabase(backend)
        for name in ["c", "a", "b"] {
            _ = try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: name, colorHex: "#000000")))
        }
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.map(\.name) == ["a", "b", "c"])
    }
}
