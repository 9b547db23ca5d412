import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

@Suite("Locations over TCP", .offThePool)
struct LocationEndToEndTests {
    @Test(arguments: Backend.all)
    func createGetUpdateListDelete(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let created = try await client.call(LocationMethods.createLocation,
                                                CreateLocationRequest(location: Location(name: "  玄關 ", colorHex: "#aabbcc")))
            #expect(isLowercaseUUIDv4(created.id))
            #expect(created.name == "玄關")
            #expect(created.colorHex == "#AABBCC")
            #expect(created.createTime != nil && created.createTime == created.updateTime)

            let fetched = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: created.id))
            #expect(fetched == created)

            let renamed = try await client.call(LocationMethods.updateLocation, UpdateLocationRequest(
                location: Location(id: created.id, name: "Hall", colorHex: "#000000"), updateMask: ["name"]))
            #expect(renamed.name == "Hall")
            #expect(renamed.colorHex == "#AABBCC", "a field outside the mask is kept")
            #expect(renamed.createTime == created.createTime)

            let replaced = try await client.call(LocationMethods.updateLocation, UpdateLocationRequest(
                location: Location(id: created.id, name: "Hall 2", colorHex: "#010203")))
            #expect(replaced.name == "Hall 2" && replaced.colorHex == "#010203")

            let list = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            #expect(list.locations.map(\.name).contains("Hall 2"))
            #expect(list.locations.map(\.name) == list.locations.map(\.name).sorted())

            _ = try await client.call(LocationMethods.deleteLocation, DeleteLocationRequest(id: created.id))
            await expectStatus(.notFound) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: created.id))
            }
            await expectStatus(.notFound) {
                try await client.call(LocationMethods.deleteLocation, DeleteLocationRequest(id: created.id))
            }
        }
    }

    @Test(arguments: Backend.all)
    func defaultLocationsAreSeeded(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let list = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            let pairs = Dictionary(uniqueKeysWithValues: list.locations.map { ($0.name, $0.colorHex) })
            #expect(pairs == ["客廳": "#FF5733", "廚房": "#33B5FF", "臥室": "#28A745", "浴室": "#FFC107"])
        }
    }

    @Test(arguments: Backend.all)
    func noSeedStartsEmpty(backend: Backend) async throws {
        try await withServer(backend, arguments: ["--no-seed"]) { _, client async throws in
            #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
            #expect(try await client.call(CategoryGroupMethods.listCategoryGroups, ListCategoryGroupsRequest())
                .categoryGroups.isEmpty)
        }
    }

    @Test(arguments: Backend.all)
    func validationAndUniquenessErrors(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let duplicate = await expectStatus(.alreadyExists) {
                try await client.call(LocationMethods.createLocation,
                                      CreateLocationRequest(location: Location(name: "客廳", colorHex: "#123456")))
            }
            #expect(duplicate?.message.contains("客廳") == true)
            let badColor = await expectStatus(.invalidArgument) {
                try await client.call(LocationMethods.createLocation,
                                      CreateLocationRequest(location: Location(name: "Attic", colorHex: "red")))
            }
            #expect(badColor?.message.contains("color_hex") == true)
            await expectStatus(.invalidArgument) {
                try await client.call(LocationMethods.createLocation,
                                      CreateLocationRequest(location: Location(name: "   ", colorHex: "#123456")))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                    location: Location(name: String(repeating: "長", count: 101), colorHex: "#123456")))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "not-a-uuid"))
            }
            await expectStatus(.invalidArgument) {
                try await client.call(LocationMethods.updateLocation, UpdateLocationRequest(
                    location: Location(id: "00000000-0000-4000-8000-000000000000", name: "x"), updateMask: ["weight"]))
            }
            // The name 100 characters long is fine, in CJK too, and round-trips byte for byte.
            let longest = String(repeating: "長", count: 100)
            let created = try await client.call(LocationMethods.createLocation,
                                                CreateLocationRequest(location: Location(name: longest, colorHex: "#123456")))
            #expect(Array(created.name.utf8) == Array(longest.utf8))
        }
    }

    @Test(arguments: Backend.all)
    func clientSuppliedIDAndHostileName(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let id = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
            let hostile = "'); DROP TABLE locations; --"
            let created = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                location: Location(id: id, name: hostile, colorHex: "#123456")))
            #expect(created.id == id.lowercased())
            #expect(try await client.call(LocationMethods.getLocation, GetLocationRequest(id: created.id)).name == hostile)
            await expectStatus(.alreadyExists) {
                try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                    location: Location(id: id, name: "Other", colorHex: "#123456")))
            }
            #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 5)
        }
    }
}
