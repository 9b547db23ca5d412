import Foundation
import LarderAPI
import LarderClient
import LarderMemoryStore
import LarderTestSupport
import LarderWire
import Testing
import LarderServer

/// Every served method reaches its handler; an unknown one is UNIMPLEMENTED.
@Suite("Server routing (in process)", .offThePool)
struct RoutingTests {
    /// The services `larder-server` serves, as generated from proto/.
    static let services: [ServiceDescriptor] = [
        CategoryGroupMethods.service, ItemCategoryMethods.service, LocationMethods.service,
        MealRecordMethods.service, HealthMethods.service, ReflectionMethods.service, AdminMethods.service,
        GrpcReflectionV1ServerReflectionMethods.service, GrpcReflectionV1alphaServerReflectionMethods.service,
    ]
    /// The streaming methods among them: over the lean protocol, UNIMPLEMENTED with a pointer to HTTP/2
    /// (HTTP2StreamingTests reaches them).
    static let streaming: Set<String> = [
        HealthMethods.watch.path, GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path,
        GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo.path,
    ]

    @Test func everyServedMethodIsReachable() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            // The server lists the same services as proto/ declares.
            let listed = try await client.call(ReflectionMethods.listServices, ListServicesRequest()).services
            #expect(Set(listed.map(\.name)) == Set(Self.services.map(\.name)))
            var reached = 0
            for method in Self.services.flatMap(\.methods) {
                // An empty payload is a valid request with every field at its default: a handler
                // answers it (often INVALID_ARGUMENT for a missing id), the router never UNIMPLEMENTED.
                do throws(RPCError) {
                    _ = try await client.callRaw(path: method.path, payload: [])
                    reached += 1
                } catch where Self.streaming.contains(method.path) {
                    #expect(error.code == .unimplemented && error.message.contains("gRPC over HTTP/2"),
                            "\(method.path): \(error.message)")
                    reached += 1
                } catch {
                    #expect(error.code != .unimplemented, "\(method.path): \(error.message)")
                    #expect(error.code != .internal, "\(method.path): \(error.message)")
                    if error.code != .unimplemented { reached += 1 }
                }
            }
            #expect(reached == Self.services.flatMap(\.methods).count)
            #expect(reached > 20)
        }
    }

    @Test func callsReachTheStore() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            let pantry = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: MemoryStore.locationID))
            #expect(pantry.name == "Pantry")
            let created = try await client.call(LocationMethods.createLocation,
                                                CreateLocationRequest(location: Location(name: "Cellar", colorHex: "#101010")))
            let names = try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.map(\.name)
            #expect(names == ["Cellar", "Pantry"])
            await expectStatus(.alreadyExists) {
                try await client.call(LocationMethods.createLocation,
                                      CreateLocationRequest(location: Location(name: "Cellar", colorHex: "#202020")))
            }
            _ = try await client.call(LocationMethods.deleteLocation, DeleteLocationRequest(id: created.id))
            await expectStatus(.notFound) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: created.id))
            }
            #expect(server.store.submittedCount == 6)
        }
    }

    @Test func anUnknownMethodIsUnimplementedAndTheConnectionServesOn() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            for path in ["/larder.v1.LocationService/Teleport", "/no.such.Service/Get", "nonsense"] {
                let error = await expectStatus(.unimplemented) { try await client.callRaw(path: path, payload: []) }
                #expect(error?.message.contains("unknown method \"\(path)\"") == true, "\(error?.message ?? "")")
            }
            #expect(server.store.submittedCount == 0, "an unknown method never reaches the store")
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            #expect(metrics.methods.first { $0.method == "unknown" }?.callsByCode == ["UNIMPLEMENTED": 3])
        }
    }

    @Test func aTokenGuardsEverythingButHealth() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-server-tests")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("in-process-token", in: directory)
        try await withInProcessServer({ $0.authTokenFile = tokenFile }) { server in
            let anonymous = try server.client()
            defer { anonymous.close() }
            #expect(try await anonymous.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
            await expectStatus(.unauthenticated) {
                try await anonymous.call(LocationMethods.listLocations, ListLocationsRequest())
            }
            let authorized = try server.client(token: "in-process-token")
            defer { authorized.close() }
            #expect(try await authorized.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 1)
        }
    }
}
