import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

/// The server's own deadline over the lean protocol: a call the store has not answered by its
/// `timeout_ms` is answered DEADLINE_EXCEEDED then (within the 250 ms tick), not when the
/// database is free again. Over HTTP/2: HTTP2EndToEndTests.serverEnforcesTheDeadline.
@Suite("call deadlines against larder-server", .offThePool)
struct DeadlineEndToEndTests {
    /// The next reply on `connection`, waiting up to a minute (a loaded machine may be slow).
    static func reply(on connection: RawConnection) async -> ResponseEnvelope? {
        await offThePool { connection.receive(within: 60) }
    }

    @Test("a write waiting for a locked database is answered DEADLINE_EXCEEDED at its deadline, and never executed")
    func writeWaitingForTheLock() async throws {
        let server = try await ServerProcess(arguments: ["--busy-timeout", "300", "--no-seed"])
        defer { server.stop() }
        let lock = try SQLiteLock(path: server.databasePath)
        let raw = try RawConnection(port: server.port)
        let create = LocationMethods.createLocation.path
        raw.send(RequestEnvelope(callID: 7, method: create, payload: ProtoCodec.encode(
            CreateLocationRequest(location: Location(name: "Too late", colorHex: "#010203"))), timeoutMilliseconds: 300))
        // The answer comes while the database is still locked: the lock is released only after it.
        let reply = try #require(await Self.reply(on: raw))
        #expect(reply == ResponseEnvelope(callID: 7, statusCode: .deadlineExceeded,
                                          statusMessage: "deadline of \(create) exceeded"))
        // Call id 7 is free again at once: a read with it is answered on its own.
        raw.send(RequestEnvelope(callID: 7, method: LocationMethods.listLocations.path,
                                 payload: ProtoCodec.encode(ListLocationsRequest())))
        let list = try #require(await Self.reply(on: raw))
        #expect(list.callID == 7 && list.statusCode == .ok)
        #expect(try ProtoCodec.decode(ListLocationsResponse.self, from: list.payload).locations.isEmpty)
        lock.release()
        // The writer reaches the write once the lock is gone, and skips it: its deadline passed.
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        #expect(await eventually {
            (try? await lean.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight) == 1
        })
        #expect(try await lean.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
        // Its late end was dropped: the connection got exactly the two replies above.
        raw.send(RequestEnvelope(callID: 9, method: HealthMethods.check.path, payload: ProtoCodec.encode(HealthCheckRequest())))
        let health = try #require(await Self.reply(on: raw))
        #expect(health.callID == 9 && health.statusCode == .ok)
    }

    /// The server closed `connection`: end of stream within a minute (a loaded machine may be slow).
    static func closedByServer(_ connection: RawConnection) async -> Bool {
        await offThePool { (0..<6).contains { _ in connection.isClosedByServer() } }
    }

    @Test("a half-closed connection whose call was answered at its deadline closes once the store has let the call go")
    func halfClosedConnectionClosesAfterTheLateEnd() async throws {
        let server = try await ServerProcess(arguments: ["--busy-timeout", "300", "--no-seed", "--idle-timeout", "3600"])
        defer { server.stop() }
        let lock = try SQLiteLock(path: server.databasePath)
        let raw = try RawConnection(port: server.port)
        raw.send(RequestEnvelope(callID: 3, method: LocationMethods.createLocation.path, payload: ProtoCodec.encode(
            CreateLocationRequest(location: Location(name: "Late", colorHex: "#010203"))), timeoutMilliseconds: 300))
        raw.shutdownSending()  // all it will send; it still reads
        let reply = try #require(await Self.reply(on: raw))
        #expect(reply.callID == 3 && reply.statusCode == .deadlineExceeded)
        lock.release()
        // The writer lets the call go; its slot was all the connection waited for. Before, it
        // stayed open until the idle timeout (an hour here).
        #expect(await Self.closedByServer(raw))
    }

    @Test("a peer that is gone while its call waits in the store is closed at once, not polled until the call ends")
    func vanishedPeerIsClosedWhileItsCallWaits() async throws {
        let server = try await ServerProcess(arguments: ["--busy-timeout", "300", "--no-seed", "--idle-timeout", "3600"])
        defer { server.stop() }
        let lock = try SQLiteLock(path: server.databasePath)
        defer { lock.release() }
        do {
            let raw = try RawConnection(port: server.port)
            raw.send(RequestEnvelope(callID: 5, method: LocationMethods.createLocation.path, payload: ProtoCodec.encode(
                CreateLocationRequest(location: Location(name: "Gone", colorHex: "#010203"))), timeoutMilliseconds: 300))
            raw.shutdownSending()
            #expect(await server.waitForLog("event=peer_half_closed"))
        }  // closed after the server read end of stream with the call in flight (so the read
           // path is done with it): its deadline answer meets the closed socket, which resets
           // (or it was unread there, and the close reset it): hung up for good
        // Closed while the database is still locked (the call still waits in the writer); before,
        // the loop woke for the hung-up socket on every turn, at 100 % CPU, until the call ended,
        // and for ever once the call had been answered at its deadline.
        #expect(await server.waitForLog("reason=\"the peer is gone (socket hung up); calls in flight: 1\""), "\(server.stderr)")
        let lean = try LarderClient.loopback(port: server.port)
        defer { lean.close() }
        #expect(try await lean.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
    }

    @Test("a timeout too long to send is capped, not an overflow: the client's calls with Duration's largest succeed")
    func hugeTimeoutsAreCapped() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed"])
        defer { server.stop() }
        let client = try LarderClient.loopback(port: server.port, timeout: .seconds(Int64.max))
        defer { client.close() }
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        let created = try await client.call(LocationMethods.createLocation,
                                            CreateLocationRequest(location: Location(name: "Cellar", colorHex: "#102030")),
                                            timeout: .seconds(Int64.max / 3) + .milliseconds(1))
        #expect(created.name == "Cellar")
    }
}
