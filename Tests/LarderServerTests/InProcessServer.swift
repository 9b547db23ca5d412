import Foundation
import LarderClient
import LarderReactor
import LarderServer
import LarderTestSupport
import LarderSystem

/// The real `Server` in the test process: over an `InMemoryStore`, on 127.0.0.1 with
/// an ephemeral port, its event loop on a thread of its own (never on Swift's pool).
/// `stop()` drains it and waits for its thread to end; every test calls it.
final class InProcessServer: Sendable {
    let server: Server
    let store: InMemoryStore
    let configuration: ServerConfiguration
    private let stopped = LockedValue(false)

    /// Starts a server with the defaults, a drain long enough for a loaded machine,
    /// and whatever `configure` changes; it logs errors to stderr, or what `logger` takes.
    init(store: InMemoryStore = InMemoryStore(), logger: Logger = Logger(minimumLevel: .error),
         _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.listen = SocketAddress(host: "127.0.0.1", port: 0)
        configuration.drainTimeoutSeconds = 120
        configure(&configuration)
        self.configuration = configuration
        self.store = store
        let server = try Server(configuration: configuration, store: store, logger: logger)
        self.server = server
        let thread = Thread { [self] in
            server.run(handleSignals: false)
            stopped.withLock { $0 = true }
        }
        thread.name = "larder-test-server"
        thread.start()
    }

    /// The port the server listens on.
    var port: UInt16 { server.address.port }

    /// True once `run()` returned (the loop stopped and the store was closed).
    var hasStopped: Bool { stopped.withLock { $0 } }

    /// A client of this server.
    func client(token: String? = nil) throws -> LarderClient {
        try LarderClient.loopback(port: port, token: token)
    }

    /// A raw socket to this server.
    func raw(receiveBufferBytes: Int32? = nil) throws -> RawConnection {
        try RawConnection(port: port, receiveBufferBytes: receiveBufferBytes)
    }

    /// Lets the store go, shuts the server down and waits (up to 120 s) for its loop to end;
    /// false if it did not.
    @discardableResult
    func stop() async -> Bool {
        store.release()
        server.shutdown()
        return await eventually(seconds: 120, every: .milliseconds(20)) { self.hasStopped }
    }
}

/// Runs `body` against a fresh in-process server and stops the server afterwards,
/// whether `body` succeeded or threw.
func withInProcessServer<R>(store: InMemoryStore = InMemoryStore(), logger: Logger = Logger(minimumLevel: .error),
                            _ configure: (inout ServerConfiguration) -> Void = { _ in },
                            _ body: (InProcessServer) async throws -> R) async throws -> R {
    let server = try InProcessServer(store: store, logger: logger, configure)
    let result: R
    do {
        result = try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    guard await server.stop() else { throw SupportError("the server's loop did not stop within 120 s") }
    return result
}
