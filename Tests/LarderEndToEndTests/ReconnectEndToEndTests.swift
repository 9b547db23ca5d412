import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// Issue 14 item 13: `LarderClient` survives the server's idle timeout, a restart and an outage.
@Suite("LarderClient reconnects", .offThePool)
struct ReconnectEndToEndTests {
    static func client(_ server: ServerProcess) throws -> LarderClient {
        var options = ClientOptions(defaultTimeout: .seconds(30))
        options.reconnectBackoff = ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(500))
        return try LarderClient(server: ServerAddress(parsing: server.address), options: options)
    }

    @Test func afterTheIdleTimeoutTheNextCallReconnects() async throws {
        let server = try await ServerProcess(arguments: ["--idle-timeout", "1"])
        defer { server.stop() }
        let client = try Self.client(server)
        defer { client.close() }
        _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        // The server drops the idle connection after 1 s; the client notices the end.
        #expect(await eventually { !client.isConnected })
        let locations = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        #expect(!locations.locations.isEmpty)
    }

    @Test func afterARestartOnTheSamePortAndDatabaseTheNextCallReconnects() async throws {
        let port = try unusedLoopbackPort()
        let server = try await ServerProcess(arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        #expect(server.port == port)
        let client = try Self.client(server)
        defer { client.close() }
        let created = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
            location: Location(name: "玄關", colorHex: "#AABBCC")))
        server.stop()
        // While the server is down, calls fail with UNAVAILABLE (at once, between backoff attempts).
        #expect(await eventually { !client.isConnected })
        for _ in 0..<3 {
            let down = await outcome { () async throws(RPCError) in
                try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            }
            #expect(down.failure?.code == .unavailable)
        }
        try await Task.sleep(for: .seconds(1))
        try await server.start()
        #expect(server.port == port)
        var fetched: Location?
        let back = await eventually {
            fetched = try? await client.call(LocationMethods.getLocation, GetLocationRequest(id: created.id))
            return fetched != nil
        }
        #expect(back)
        #expect(fetched?.name == "玄關")
    }
}

/// Runs a call that throws `RPCError` and captures its outcome.
private func outcome<T>(_ body: () async throws(RPCError) -> T) async -> Result<T, RPCError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
