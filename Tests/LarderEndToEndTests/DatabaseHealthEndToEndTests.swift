import LarderTestSupport
import Foundation
import LarderAPI
import LarderClient
import LarderPostgres
import LarderWire
import Testing

/// `Health/Check` follows the database, as a load balancer in front of replicas
/// needs: NOT_SERVING while this replica's database cannot take writes, SERVING
/// again once it can, with the loss and the recovery in the log.
@Suite("Health follows the PostgreSQL database",
       .enabled(if: PostgresTestDatabase.adminURL != nil, "LARDER_TEST_POSTGRES_URL is not set"), .offThePool)
struct DatabaseHealthEndToEndTests {
    static func status(_ client: LarderClient) async -> HealthCheckResponse.ServingStatus? {
        try? await client.call(HealthMethods.check, HealthCheckRequest()).status
    }

    /// Polls the server's health for up to 30 s until it is `wanted`.
    static func waitForHealth(_ client: LarderClient, _ wanted: HealthCheckResponse.ServingStatus) async -> Bool {
        for _ in 0..<300 {
            if await status(client) == wanted { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Creates a location, retrying for up to 10 s; its name, or nil.
    static func create(_ client: LarderClient, _ name: String) async -> String? {
        for _ in 0..<100 {
            let request = CreateLocationRequest(location: Location(name: name, colorHex: "#000000"))
            if let created = try? await client.call(LocationMethods.createLocation, request) { return created.name }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test func healthIsNotServingWhileTheDatabaseIsReadOnlyAndServingWhenItIsBack() async throws {
        let database = try PostgresTestDatabase()
        let server = try await ServerProcess(databasePath: database.url)
        defer { server.stop() }
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                                      options: ClientOptions(defaultTimeout: .seconds(20)))
        defer { client.close() }
        #expect(await Self.status(client) == .serving)

        // What the old primary looks like after a failover: every new session is read-only.
        let admin = try PostgresConnection(url: database.url, applicationName: "larder-tests-admin")
        defer { admin.close() }
        try admin.execute("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                        [.text(database.name)])
        #expect(await Self.waitForHealth(client, .notServing))
        #expect(await server.waitForLog("event=database_lost", seconds: 120))
        do {
            _ = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                location: Location(name: "while read-only", colorHex: "#000000")))
            Issue.record("a write succeeded on a read-only database")
        } catch {
            #expect(error.code == .unavailable, "retryable: \(error)")
        }

        try admin.execute("ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        #expect(await Self.waitForHealth(client, .serving))
        #expect(await server.waitForLog("event=database_regained", seconds: 120))
        #expect(server.stderr.contains("unavailable_s="))
        #expect(await Self.create(client, "back") == "back")
    }
}
