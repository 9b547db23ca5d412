import LarderAPI
import LarderClient
import LarderMemoryStore
import LarderTestSupport
import LarderWire
import Testing
import LarderServer

/// A reply over the 4 MiB a lean reply frame holds: that call alone is refused, with advice
/// the client can follow.
@Suite("Reply limit (in process)", .offThePool)
struct ReplyLimitTests {
    /// ListLocations without a page_size asks for the whole list: 1,100 locations with 4 KB
    /// names (stored behind the server's back; names are capped at 400 bytes) make a 4.5 MB
    /// one. Pages of the same list end early instead, below the limit.
    @Test func aWholeListOverTheLimitSaysWhatTheClientCanDoAndPagesEndEarly() async throws {
        let memory = MemoryStore()
        for index in 0..<1_100 {
            let id = StoreIDText.uuid(index)
            try memory.insertLocation(Location(id: id, name: String(repeating: "n", count: 4096) + "\(index)",
                                               colorHex: "#AABBCC"))
        }
        try await withInProcessServer(store: InMemoryStore(memory)) { server in
            let client = try server.client()
            defer { client.close() }
            do {
                _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
                Issue.record("a reply over 4 MiB was sent")
            } catch let error as RPCError {
                #expect(error.code == .resourceExhausted)
                #expect(error.message.hasPrefix("the reply is 4") && error.message.contains(
                    "bytes, more than the 4194304 bytes a reply frame may hold (what every client accepts; "
                        + "--max-frame-bytes bounds requests, not this): ask for less, with a page_size on a List call"),
                        "\(error.message)")
            }
            // Pages of 1,000 would be 4.1 MB: each ends early, with a token, and together they hold every row once.
            var request = ListLocationsRequest(pageSize: 1_000)
            var names: [String] = []
            var pages = 0
            repeat {
                let page = try await client.call(LocationMethods.listLocations, request)
                #expect(page.locations.count < 1_000)
                names += page.locations.map(\.name)
                request.pageToken = page.nextPageToken
                pages += 1
            } while !request.pageToken.isEmpty && pages < 10
            #expect(pages == 2)
            #expect(names == (0..<1_100).map { String(repeating: "n", count: 4096) + "\($0)" }.sorted {
                $0.utf8.lexicographicallyPrecedes($1.utf8)
            })
            // The connection serves on.
            #expect(try await client.call(LocationMethods.getLocation, GetLocationRequest(id: StoreIDText.uuid(7))).name
                        .hasSuffix("7"))
            // The metrics count what the client got, not the store's OK.
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            let list = metrics.methods.first { $0.method == LocationMethods.listLocations.path }
            #expect(list?.callsByCode == ["RESOURCE_EXHAUSTED": 1, "OK": 2])
        }
    }
}

/// Distinct UUIDs for test rows.
enum StoreIDText {
    static func uuid(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }
}
