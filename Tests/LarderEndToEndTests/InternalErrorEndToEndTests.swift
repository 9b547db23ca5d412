import Foundation
import LarderAPI
import LarderClient
import LarderSQLite
import LarderWire
import Testing
import LarderTestSupport

/// An INTERNAL reply tells the client a reference, not the database's text; the server's
/// log line under that reference has the database's own words (PROTOCOL.md, INTERNAL).
@Suite("Internal errors", .offThePool)
struct InternalErrorEndToEndTests {
    @Test func aDatabaseFailureGivesTheClientAReferenceAndTheLogTheDatabaseText() async throws {
        let server = try await ServerProcess()
        defer { server.kill() }
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                                      options: ClientOptions(defaultTimeout: .seconds(30)))
        defer { client.close() }
        _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        // Behind the server's back: the table its statements read is gone (SQLITE_ERROR).
        let connection = try SQLiteConnection(path: server.databasePath, flags: 0x2)  // SQLITE_OPEN_READWRITE
        try connection.execute("PRAGMA busy_timeout=30000")
        try connection.execute("ALTER TABLE locations RENAME TO locations_gone")
        connection.close()

        let error = await #expect(throws: RPCError.self) {
            _ = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "3f2c7a1e-9b4d-4c2a-8e6f-0a1b2c3d4e5f"))
        }
        let reply = try #require(error)
        #expect(reply.code == .internal)
        #expect(!reply.message.contains("no such table") && !reply.message.contains("sqlite"))
        let reference = try #require(reply.message.firstMatch(of: /internal error \(ref ([0-9a-f]{12})\)/)?.1)
        #expect(await server.waitForLog("ref=\(reference)"))
        let line = try #require(server.stderr.split(separator: "\n").first { $0.contains("ref=\(reference)") })
        #expect(line.contains("event=call_failed"))
        #expect(line.contains("no such table"))
        #expect(line.contains("method=/larder.v1.LocationService/GetLocation"))
    }
}
