import LarderAPI
import LarderClient
import LarderMemoryStore
import LarderTestSupport
import LarderWire
import Testing
import LarderServer

/// A reply over the 4 MiB a lean reply frame holds: that call alone is refused, with advice
/// the client can follow.
@Suite("Reply limit (in process)")
struct ReplyLimitTests {
    /// ListLocations is not paged: 1,100 locations with 4 KB names (stored behind the
    /// server's back; names are capped at 400 bytes) make a 4.5 MB list.
    @Test func anUnpagedReplyOverTheLimitSaysWhatTheClientCanDo() async throws {
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
                        + "--max-frame-bytes bounds requests, not this); this method's replies are not paged"),
                        "\(error.message)")
                #expect(!error.message.contains("page_size"), "ListLocationsRequest has no page_size")
            }
            // The connection serves on.
            #expect(try await client.call(LocationMethods.getLocation, GetLocationRequest(id: StoreIDText.uuid(7))).name
                        .hasSuffix("7"))
            // The metrics count what the client got, not the store's OK.
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            let list = metrics.methods.first { $0.method == LocationMethods.listLocations.path }
            #expect(list?.callsByCode == ["RESOURCE_EXHAUSTED": 1])
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
