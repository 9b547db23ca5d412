import Foundation
import LarderAPI
import LarderClient
import LarderWire
import Testing

/// Starts a server on a fresh database of `backend`, connects a client, runs `body`, then stops both.
func withServer<R>(_ backend: Backend = .sqlite, arguments: [String] = [],
                   _ body: (ServerProcess, LarderClient) async throws -> R) async throws -> R {
    let server = try await ServerProcess(backend: backend, arguments: arguments)
    let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                                  options: ClientOptions(defaultTimeout: .seconds(120)))
    defer {
        client.close()
        server.stop()
    }
    return try await body(server, client)
}

/// Expects `body` to fail with `code`; returns the error for message checks.
@discardableResult
func expectStatus(_ code: StatusCode, sourceLocation: SourceLocation = #_sourceLocation,
                  _ body: () async throws -> some Any) async -> RPCError? {
    do {
        _ = try await body()
        Issue.record("expected \(code.name), got OK", sourceLocation: sourceLocation)
        return nil
    } catch let error as RPCError {
        #expect(error.code == code, "message: \(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected RPCError \(code.name), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A UUID v4 in lowercase, as the server generates.
func isLowercaseUUIDv4(_ id: String) -> Bool {
    id.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression) != nil
}
