import Dispatch
import Foundation
import LarderAPI
import LarderClient
import LarderReactor
@testable import LarderServer
import LarderSystem
import LarderTLS
import LarderWire
import LarderTestSupport
import Testing

/// SIGHUP's reload reads the secret files on a thread of its own (`Server.reload`): a file on a
/// hung network mount held the event loop, and so every connection, until the read returned.
@Suite("Reload off the loop", .offThePool)
struct ReloadTests {
    /// A reader that waits at `gate` before reading, counting its reads.
    final class HeldReader: Sendable {
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let reads = LockedValue(0)

        func read(_ configuration: ServerConfiguration, _ previous: TLSServerContext?) -> SecretFiles {
            reads.withLock { $0 += 1 }
            started.signal()
            gate.wait()
            return SecretFiles.read(configuration, previousTLS: previous)
        }
    }

    /// Starts a reload on the loop with `reader` in place of the file system.
    static func reload(_ server: Server, reader: HeldReader) {
        server.loop.execute {
            server.secretFilesReader = reader.read
            server.reload()
        }
    }

    /// Whether the server's reload has ended (read on the loop).
    static func reloadIsIdle(_ server: Server) async -> Bool {
        await withCheckedContinuation { continuation in
            server.loop.execute { continuation.resume(returning: server.reloadState == .idle) }
        }
    }

    @Test func aReloadStuckReadingLeavesEveryConnectionServedWithTheOldToken() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-reload-tests")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("old-token", in: directory)
        try await withInProcessServer({ $0.authTokenFile = tokenFile }) { server in
            _ = try writeTokenFile("new-token", in: directory)
            let reader = HeldReader()
            Self.reload(server.server, reader: reader)
            await offThePool { reader.started.wait() }

            // The read is held: the loop still serves, with the token in force before the signal.
            let old = try server.client(token: "old-token")
            defer { old.close() }
            #expect(try await old.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 1)
            let new = try server.client(token: "new-token")
            defer { new.close() }
            await expectStatus(.unauthenticated) {
                try await new.call(LocationMethods.listLocations, ListLocationsRequest())
            }
            #expect(await !Self.reloadIsIdle(server.server))

            reader.gate.signal()
            #expect(await eventually { await Self.reloadIsIdle(server.server) })
            #expect(try await new.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 1)
            await expectStatus(.unauthenticated) {
                try await old.call(LocationMethods.listLocations, ListLocationsRequest())
            }
        }
    }

    /// Signals that come while a reload reads make one more reload after it (not one each, and
    /// not none: the last signal may follow the last change of the files).
    @Test func signalsDuringAReadMakeOneMoreReload() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-reload-tests")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = try writeTokenFile("first-token", in: directory)
        try await withInProcessServer({ $0.authTokenFile = tokenFile }) { server in
            let reader = HeldReader()
            Self.reload(server.server, reader: reader)
            await offThePool { reader.started.wait() }
            server.server.loop.execute {
                server.server.reload()
                server.server.reload()
            }
            _ = try writeTokenFile("last-token", in: directory)
            reader.gate.signal()
            await offThePool { reader.started.wait() }  // the second read
            reader.gate.signal()
            #expect(await eventually { await Self.reloadIsIdle(server.server) })
            #expect(reader.reads.withLock { $0 } == 2)
            let client = try server.client(token: "last-token")
            defer { client.close() }
            #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 1)
        }
    }
}
