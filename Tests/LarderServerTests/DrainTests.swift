import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing
import LarderServer

/// `Server.shutdown()`: calls in flight finish, new ones get UNAVAILABLE, health says
/// NOT_SERVING, and the loop stops once the last reply is written.
@Suite("Server drain (in process)", .offThePool)
struct DrainTests {
    @Test func shutdownFinishesCallsInFlightAndRefusesNewOnes() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
            server.store.hold()
            let inFlight = Task(executorPreference: BlockingWorkExecutor.shared) {
                try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            }
            #expect(await eventually { server.store.submittedCount == 1 })

            server.server.shutdown()
            // Health still answers on an open connection while draining, so clients see it go.
            #expect(await eventually {
                (try? await client.call(HealthMethods.check, HealthCheckRequest()).status) == .notServing
            })
            let refused = await expectStatus(.unavailable) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "x"))
            }
            #expect(refused?.message.contains("shutting down") == true, "\(refused?.message ?? "")")
            #expect(server.store.submittedCount == 1, "a refused call never reaches the store")
            // The listener is closed: a new connection is refused.
            await expectStatus(.unavailable) {
                let late = try LarderClient.loopback(port: server.port, timeout: .seconds(10))
                defer { late.close() }
                return try await late.call(HealthMethods.check, HealthCheckRequest())
            }
            #expect(!server.hasStopped, "the drain waits for the call in flight")

            server.store.release()
            #expect(try await inFlight.value.locations.count == 1, "the call in flight finishes OK")
            #expect(await eventually(seconds: 120) { server.hasStopped }, "the loop stops after the last reply")
        }
    }

    @Test func aServerWithNothingInFlightStopsAtOnce() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            server.server.shutdown()
            #expect(await eventually(seconds: 120) { server.hasStopped })
            await expectStatus(.unavailable) { try await client.call(HealthMethods.check, HealthCheckRequest()) }
        }
    }
}
