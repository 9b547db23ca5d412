import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// Starts a server on a fresh database of `backend`, connects a client, runs `body`, then stops both.
func withServer<R>(_ backend: Backend = .sqlite, arguments: [String] = [],
                   _ body: (ServerProcess, LarderClient) async throws -> R) async throws -> R {
    let server = try await ServerProcess(backend: backend, arguments: arguments)
    let client = try LarderClient.loopback(port: server.port, timeout: .seconds(120))
    defer {
        client.close()
        server.stop()
    }
    return try await body(server, client)
}

/// A UUID v4 in lowercase, as the server generates.
func isLowercaseUUIDv4(_ id: String) -> Bool {
    id.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression) != nil
}
