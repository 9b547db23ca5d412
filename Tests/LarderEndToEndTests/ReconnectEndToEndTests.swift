import Foundation
import LarderAPI
import LarderClient
import LarderWire
import Testing

/// Issue 14 item 13: `LarderClient` survives the server's idle timeout, a restart and an outage.
@Suite("LarderClient reconnects")
struct ReconnectEndToEndTests {
    /// A loopback port that was free a moment ago, so a server can be restarted on the same one.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    static func client(_ server: ServerProcess) throws -> LarderClient {
        var options = ClientOptions(defaultTimeout: .seconds(30))
        options.reconnectBackoff = ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(500))
        return try LarderClient(server: ServerAddress(parsing: server.address), options: options)
    }

    /// Polls `condition` every 50 ms for up to 60 s.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return await condition()
    }

    @Test func afterTheIdleTimeoutTheNextCallReconnects() async throws {
        let server = try await ServerProcess(arguments: ["--idle-timeout", "1"])
        defer { server.stop() }
        let client = try Self.client(server)
        defer { client.close() }
        _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        // The server drops the idle connection after 1 s; the client notices the end.
        #expect(await Self.eventually { !client.isConnected })
        let locations = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
        #expect(!locations.locations.isEmpty)
    }

    @Test func afterARestartOnTheSamePortAndDatabaseTheNextCallReconnects() async throws {
        let port = try Self.freePort()
        let server = try await ServerProcess(arguments: ["--listen", "127.0.0.1:\(port)"])
        defer { server.stop() }
        #expect(server.port == port)
        let client = try Self.client(server)
        defer { client.close() }
        let created = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
            location: Location(name: "玄關", colorHex: "#AABBCC")))
        server.stop()
        // While the server is down, calls fail with UNAVAILABLE (at once, between backoff attempts).
        #expect(await Self.eventually { !client.isConnected })
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
        let back = await Self.eventually {
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
