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
        _ = try await Self.listBeforeTheIdleTimeout(client)
        // The server drops the idle connection after 1 s; the client notices the end.
        #expect(await eventually { !client.isConnected })
        let locations = try await Self.listBeforeTheIdleTimeout(client)
        #expect(!locations.locations.isEmpty)
    }

    /// A list call; again (at most 5 times) when the connection it went out on idled out first:
    /// on a machine busy enough (ThreadSanitizer, every suite at once), more than the second of
    /// idle timeout can pass between a connect and the first call's frame, and the server's
    /// idle close then answers it (UNAVAILABLE, never sent again, as documented).
    static func listBeforeTheIdleTimeout(_ client: LarderClient) async throws -> ListLocationsResponse {
        for _ in 1..<5 {
            let result = await outcome { () async throws(RPCError) in
                try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            }
            if case .failure(let error) = result, error.code == .unavailable, error.message.contains("idle") { continue }
            return try result.get()
        }
        return try await client.call(LocationMethods.listLocations, ListLocationsRequest())
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
