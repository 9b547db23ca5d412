import LarderAPI
import LarderStore
import LarderWire
import Testing

@Suite struct LocationTests {
    @Test func createGetListUpdateDelete() throws {
        let db = try TestDatabase()
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
        #expect(missing?.code == .notFound)
        #expect(missing?.message == "location \"\(created.id)\" not found")
    }
}
