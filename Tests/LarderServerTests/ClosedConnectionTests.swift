import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing
@testable import LarderServer

/// What becomes of a connection's calls when it closes before they ran.
@Suite("Calls of a closed connection (in process)", .offThePool)
struct ClosedConnectionTests {
    static let list = LocationMethods.listLocations.path

    /// A peer that pipelines reads and resets its connection, again and again, left the
    /// readers every one of those reads to run for nobody: 40 rounds of 1,024 in 18 s queued
    /// 40,000 reads, which took other clients' reads from milliseconds to seconds for half an
    /// hour (audit 25 H1). Reads the store has not started end CANCELLED without running;
    /// writes still run, since a write taken is committed (PROTOCOL.md §4).
    @Test(arguments: [false, true])
    func readsNotStartedWhenTheConnectionClosesEndCancelledAndWritesStillRun(overHTTP2: Bool) async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            _ = try await client.call(HealthMethods.check, HealthCheckRequest())
            server.store.hold()
            let reads = 40
            let written = "written after its connection closed" + (overHTTP2 ? " (HTTP/2)" : "")
            let create = CreateLocationRequest(location: Location(name: written, colorHex: "#102030"))
            if overHTTP2 {
                let h2 = try HTTP2TestClient(port: server.port)
                h2.resetOnClose()
                for _ in 1...reads { _ = try h2.start(Self.list, messages: [ProtoCodec.encode(ListLocationsRequest())]) }
                _ = try h2.start(LocationMethods.createLocation.path, messages: [ProtoCodec.encode(create)])
                #expect(await eventually(seconds: 600) { server.store.submittedCount == reads + 1 })
                withExtendedLifetime(h2) {}  // reset only now, once every call was submitted
            } else {
                let raw = try server.raw()
                raw.resetOnClose()
                var frames: [UInt8] = []
                for id in 1...reads {
                    Frame.append(ProtoCodec.encode(RequestEnvelope(callID: UInt64(id), method: Self.list,
                                                                   payload: ProtoCodec.encode(ListLocationsRequest()))),
                                 to: &frames)
                }
                Frame.append(ProtoCodec.encode(RequestEnvelope(callID: UInt64(reads + 1),
                                                               method: LocationMethods.createLocation.path,
                                                               payload: ProtoCodec.encode(create))), to: &frames)
                let sent = frames
                await offThePool { raw.send(sent) }
                #expect(await eventually(seconds: 600) { server.store.submittedCount == reads + 1 })
                withExtendedLifetime(raw) {}  // reset only now, once every call was submitted
            }
            // The server has closed it (the client's connection is the only one left) before the store goes on.
            #expect(await eventually(seconds: 600) { server.server.budget.connectionCount == 1 })
            server.store.release()
            // Every call ends, whatever its code (so a regression fails here at once, not at the bound).
            #expect(await eventually(seconds: 600) {
                let created = try? await Self.callsByCode(LocationMethods.createLocation.path, client)
                let listed = try? await Self.callsByCode(Self.list, client)
                return created?.values.reduce(0, +) == 1 && listed?.values.reduce(0, +) == UInt64(reads)
            })
            #expect(try await Self.callsByCode(LocationMethods.createLocation.path, client) == ["OK": 1])
            #expect(try await Self.callsByCode(Self.list, client) == ["CANCELLED": UInt64(reads)], "none ran")
            let locations = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            #expect(locations.locations.contains { $0.name == written }, "the write was applied")
            // A connection that half-closes has its writes applied and answered.
            let halfClosed = try server.raw()
            let halfClosedCreate = CreateLocationRequest(location: Location(name: written + " (half-closed)", colorHex: "#102030"))
            halfClosed.send(RequestEnvelope(callID: 1, method: LocationMethods.createLocation.path,
                                            payload: ProtoCodec.encode(halfClosedCreate)))
            halfClosed.shutdownSending()
            let reply = await offThePool { halfClosed.receive() }
            #expect(reply?.statusCode == .ok)
            let after = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            #expect(after.locations.contains { $0.name == written + " (half-closed)" })
        }
    }

    static func callsByCode(_ path: String, _ client: LarderClient) async throws -> [String: UInt64] {
        let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
        return metrics.methods.first { $0.method == path }?.callsByCode ?? [:]
    }
}
