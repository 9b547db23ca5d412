import LarderAPI
@testable import LarderStore
import LarderWire
import Testing

/// ListLocations, ListCategoryGroups and ListItemCategories: pages in (name, id) byte order,
/// keyset page tokens bound to their method and filter, and `page_size` 0 for the whole list.
///
/// Each test runs on a fresh database of every backend in `Backend.all`.
@Suite struct NamePaginationTests {
    /// Walks every page of ListLocations with `pageSize`, calling `between` after each page.
    static func walkLocations(_ db: TestDatabase, pageSize: Int32,
                              between: (Int) throws -> Void = { _ in }) throws -> (names: [String], pages: Int) {
        var names: [String] = []
        var request = ListLocationsRequest(pageSize: pageSize)
        var pages = 0
        repeat {
            let page = try db.read(Operations.listLocations, request)
            #expect(page.locations.count <= Int(pageSize))
            names += page.locations.map(\.name)
            request.pageToken = page.nextPageToken
            pages += 1
            try between(pages)
        } while !request.pageToken.isEmpty && pages < 1_000
        return (names, pages)
    }

    static func byteOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    static func addLocation(_ db: TestDatabase, _ name: String) throws -> Location {
        try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: name, colorHex: "#102030")))
    }

    @Test(arguments: Backend.all)
    func pagesAreInByteOrderOfNameAndTheWholeListIsPageSizeZero(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: false)
        // Upper case before lower case, then multi-byte characters by their UTF-8 bytes: both backends agree.
        let names = ["b", "B", "é", "z", "Z", "ä", "客廳", "a b", "a", "10", "9"]
        for name in names { _ = try Self.addLocation(db, name) }
        let expected = names.sorted(by: Self.byteOrder)
        #expect(expected == ["10", "9", "B", "Z", "a", "a b", "b", "z", "ä", "é", "客廳"])

        let whole = try db.read(Operations.listLocations, ListLocationsRequest())
        #expect(whole.locations.map(\.name) == expected && whole.nextPageToken.isEmpty)
        for size: Int32 in [1, 3, 11, 12] {
            let walk = try Self.walkLocations(db, pageSize: size)
            #expect(walk.names == expected, "page size \(size)")
            #expect(walk.pages == (names.count + Int(size) - 1) / Int(size), "page size \(size)")
        }
        // A token with page_size 0: everything after it, in one reply.
        let first = try db.read(Operations.listLocations, ListLocationsRequest(pageSize: 4))
        let rest = try db.read(Operations.listLocations, ListLocationsRequest(pageToken: first.nextPageToken))
        #expect(rest.locations.map(\.name) == Array(expected.dropFirst(4)) && rest.nextPageToken.isEmpty)
    }

    @Test(arguments: Backend.all)
    func walkingPagesWhileOthersWriteNeitherSkipsNorRepeatsWhatStayed(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: false)
        var stayed: [String] = []
        var deletable: [Location] = []
        for index in 0..<120 {
            let location = try Self.addLocation(db, "room " + String(1_000 + index).dropFirst())
            if index % 10 == 5 { deletable.append(location) } else { stayed.append(location.name) }
        }
        let walk = try Self.walkLocations(db, pageSize: 7) { page in
            // Between pages: a new name before every cursor, one after it, a deletion and a rename.
            _ = try Self.addLocation(db, "a new \(page)")
            _ = try Self.addLocation(db, "zz new \(page)")
            if let gone = deletable.popLast() {
                _ = try db.write(Operations.deleteLocation, DeleteLocationRequest(id: gone.id))
            }
        }
        let rooms = walk.names.filter { $0.hasPrefix("room") }
        #expect(Set(rooms).count == rooms.count, "a row was returned twice")
        #expect(Set(stayed).isSubset(of: Set(rooms)), "a row that stayed was skipped")
        #expect(walk.names == walk.names.sorted(by: Self.byteOrder))
        #expect(!walk.names.contains { $0.hasPrefix("a new") }, "rows inserted behind the cursor are not seen")
        #expect(walk.names.contains("zz new 1"), "rows inserted ahead of the cursor are seen")
    }

    @Test(arguments: Backend.all)
    func itemCategoryPagesKeepTheirGroupAndTieOnId(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: false)
        let groups = try ["Food", "Tools", "Toys"].map { name in
            try db.write(Operations.createCategoryGroup,
                         CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: name, colorHex: "#102030")))
        }
        var all: [ItemCategory] = []
        for group in groups {
            for name in ["box", "jar", "bag", "tin"] {
                all.append(try db.write(Operations.createItemCategory, CreateItemCategoryRequest(itemCategory: ItemCategory(
                    name: name, iconName: "icon", categoryGroupID: group.id))))
            }
        }
        // Three categories of each name: ties broken by id, across pages of 2.
        let expected = all.sorted { ($0.name, $0.id) < ($1.name, $1.id) }.map(\.id)
        var ids: [String] = []
        var request = ListItemCategoriesRequest(pageSize: 2)
        repeat {
            let page = try db.read(Operations.listItemCategories, request)
            ids += page.itemCategories.map(\.id)
            request.pageToken = page.nextPageToken
        } while !request.pageToken.isEmpty && ids.count <= all.count
        #expect(ids == expected)

        let food = ListItemCategoriesRequest(categoryGroupID: groups[0].id, pageSize: 3)
        let first = try db.read(Operations.listItemCategories, food)
        #expect(first.itemCategories.map(\.name) == ["bag", "box", "jar"])
        var next = food
        next.pageToken = first.nextPageToken
        #expect(try db.read(Operations.listItemCategories, next).itemCategories.map(\.name) == ["tin"])
        // The token belongs to Food's listing: not to another group's, nor to all groups'.
        for other in [groups[1].id, ""] {
            var wrong = next
            wrong.categoryGroupID = other
            #expect(rpcError { try db.read(Operations.listItemCategories, wrong) } == RPCError(.invalidArgument,
                "page_token was issued for another category_group_id; repeat it unchanged"))
        }
    }

    @Test(arguments: Backend.all)
    func groupsPageToo(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: false)
        let names = (0..<5).map { "group \($0)" }
        for name in names.reversed() {
            _ = try db.write(Operations.createCategoryGroup,
                             CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: name, colorHex: "#102030")))
        }
        let first = try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest(pageSize: 3))
        #expect(first.categoryGroups.map(\.name) == Array(names.prefix(3)))
        let second = try db.read(Operations.listCategoryGroups,
                                 ListCategoryGroupsRequest(pageSize: 3, pageToken: first.nextPageToken))
        #expect(second.categoryGroups.map(\.name) == Array(names.suffix(2)) && second.nextPageToken.isEmpty)
    }

    /// Rows stored before names were capped (here behind the server's back) with names over
    /// 64 KiB are left out of pages, so every token issued decodes and every page fits a reply;
    /// the whole list (page_size 0) still has them.
    @Test(arguments: Backend.all)
    func rowsWithNamesOver64KiBAreLeftOutOfPages(backend: Backend) throws {
        let db = try TestDatabase(backend, seed: false)
        for name in ["a", "c", "e"] { _ = try Self.addLocation(db, name) }
        let huge = backend == .sqlite ? "'b' || hex(zeroblob(40000))" : "'b' || repeat('0', 80000)"
        let large = backend == .sqlite ? "'d' || hex(zeroblob(30000))" : "'d' || repeat('0', 60000)"
        try db.closeAndExecuteRaw("""
            INSERT INTO locations (id, name, color_hex, create_time_ms, update_time_ms) VALUES
              ('00000000-0000-4000-8000-0000000000b1', \(huge), '#000000', 0, 0),
              ('00000000-0000-4000-8000-0000000000d1', \(large), '#000000', 0, 0)
            """)
        try db.reopen(seed: false)
        for size: Int32 in [1, 2, 1000] {
            let walk = try Self.walkLocations(db, pageSize: size)
            #expect(walk.names.map { String($0.prefix(1)) } == ["a", "c", "d", "e"], "page size \(size)")
        }
        let whole = try db.read(Operations.listLocations, ListLocationsRequest())
        #expect(whole.locations.map { String($0.name.prefix(1)) } == ["a", "b", "c", "d", "e"])
        // A location's token tampered into another filter is not valid (these lists have no filter).
        let page = try db.read(Operations.listLocations, ListLocationsRequest(pageSize: 1))
        var bytes = try #require(Base64.decode(page.nextPageToken.utf8, rules: .pageToken))
        bytes[5] ^= 0xFF
        #expect(rpcError { try db.read(Operations.listLocations,
                                       ListLocationsRequest(pageSize: 1, pageToken: Base64.encode(bytes, alphabet: .urlSafe, padded: false))) }
                == RPCError(.invalidArgument, "page_token is not valid; pass the next_page_token of a previous page"))
    }

    @Test func pageSizesAreCappedAndBadRequestsRefused() throws {
        let db = try TestDatabase(.sqlite, seed: false)
        _ = try db.write({ (_: Int, writer: any StoreWriter) throws(RPCError) -> Int in
            for index in 0..<1_003 {
                _ = try Operations.createLocation(CreateLocationRequest(location: Location(
                    name: "shelf \(index)", colorHex: "#102030")), writer)
            }
            return 0
        }, 0)
        let capped = try db.read(Operations.listLocations, ListLocationsRequest(pageSize: 5_000))
        #expect(capped.locations.count == 1_000 && !capped.nextPageToken.isEmpty)
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.count == 1_003)

        #expect(rpcError { try db.read(Operations.listLocations, ListLocationsRequest(pageSize: -1)) }
            == RPCError(.invalidArgument, "page_size must not be negative, got -1"))
        let notAToken = RPCError(.invalidArgument, "page_token is not valid; pass the next_page_token of a previous page")
        // Tokens are opaque, not signed: one edited into another valid cursor is not caught, but
        // what is not a token at all is.
        for token in ["x", "not a token!", "AAAA", String(capped.nextPageToken.prefix(30))] {
            #expect(rpcError { try db.read(Operations.listLocations, ListLocationsRequest(pageToken: token)) } == notAToken,
                    "\(token)")
        }
        // A token edited to carry a NUL in its name: refused as no token (PostgreSQL's text cannot
        // hold one, and it cut the name short there, an audit found).
        var edited = try #require(Base64.decode(capped.nextPageToken.utf8, rules: .pageToken))
        edited.append(0)
        let withNUL = Base64.encode(edited, alphabet: .urlSafe, padded: false)
        #expect(rpcError { try db.read(Operations.listLocations, ListLocationsRequest(pageToken: withNUL)) } == notAToken)
        let huge = String(repeating: "A", count: 200_000)
        #expect(rpcError { try db.read(Operations.listLocations, ListLocationsRequest(pageToken: huge)) }?.message
            .hasPrefix("page_token is not valid: it is 200000 bytes, longer than any page token") == true)
        // A ListLocations token is not one of ListCategoryGroups, nor of ListMealRecords.
        #expect(rpcError {
            try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest(pageToken: capped.nextPageToken))
        } == RPCError(.invalidArgument,
                      "page_token was issued by another method; pass the next_page_token of a previous page of this one"))
        #expect(rpcError {
            try db.read(Operations.listMealRecords, ListMealRecordsRequest(pageToken: capped.nextPageToken))
        }?.code == .invalidArgument)
    }
}
