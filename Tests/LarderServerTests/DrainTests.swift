import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing
import Dispatch
import LarderReactor
import Glibc
@testable import LarderServer

/// `Server.shutdown()`: calls in flight finish, new ones get UNAVAILABLE, health says
/// NOT_SERVING, and the loop stops once the last reply is written.
@Suite("Server drain (in process)", .offThePool)
struct DrainTests {
    @Test func shutdownFinishesCallsInFlightAndRefusesNewOnes() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
            server.store.hold()
            let inFlight = Task(executorPreference: BlockingWorkExecutor.shared) {
                try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            }
            #expect(await eventually { server.store.submittedCount == 1 })

            server.server.shutdown()
            // Health still answers on an open connection while draining, so clients see it go.
            #expect(await eventually {
                (try? await client.call(HealthMethods.check, HealthCheckRequest()).status) == .notServing
            })
            let refused = await expectStatus(.unavailable) {
                try await client.call(LocationMethods.getLocation, GetLocationRequest(id: "x"))
            }
            #expect(refused?.message.contains("shutting down") == true, "\(refused?.message ?? "")")
            #expect(server.store.submittedCount == 1, "a refused call never reaches the store")
            // The listener is closed: a new connection is refused.
            await expectStatus(.unavailable) {
                let late = try LarderClient.loopback(port: server.port, timeout: .seconds(10))
                defer { late.close() }
                return try await late.call(HealthMethods.check, HealthCheckRequest())
            }
            #expect(!server.hasStopped, "the drain waits for the call in flight")

            server.store.release()
            #expect(try await inFlight.value.locations.count == 1, "the call in flight finishes OK")
            #expect(await eventually(seconds: 120) { server.hasStopped }, "the loop stops after the last reply")
        }
    }

    /// Lean frames read before the drain began but left for a later pass (64 a pass) are each
    /// answered, UNAVAILABLE, before the loop stops (review 32 L8: the drain ended with them
    /// unanswered). The loop is held while the pipeline arrives, so one read takes all of it
    /// and the drain begins between the first pass and the next.
    @Test func framesLeftForALaterPassAreAnsweredBeforeTheDrainEnds() async throws {
        try await withInProcessServer { server in
            let raw = try server.raw()
            raw.send(RequestEnvelope(callID: 1, method: HealthMethods.check.path, payload: []))
            #expect(raw.receive()?.statusCode == .ok, "the connection is accepted and served")
            let count = 1000  // about 30 KB: one read of the loop's 64 KiB
            var bytes: [UInt8] = []
            for id in 2...UInt64(count + 1) {
                Frame.append(ProtoCodec.encode(RequestEnvelope(callID: id, method: HealthMethods.check.path, payload: [])),
                             to: &bytes)
            }
            let held = DispatchSemaphore(value: 0)
            let holding = DispatchSemaphore(value: 0)
            server.server.loop.execute { holding.signal(); held.wait() }
            holding.wait()
            raw.send(bytes)
            // Every byte acknowledged: all of it waits in the server's socket.
            #expect(await eventually(seconds: 60) {
                var unacknowledged: Int32 = 0
                return ioctl(raw.fd, UInt(TIOCOUTQ), &unacknowledged) == 0 && unacknowledged == 0
            })
            server.server.shutdown()  // runs after the next turn's read and its first pass
            held.signal()
            // Health answers while draining, NOT_SERVING: the frames handled after the drain began say so.
            var answered: [String: Int] = [:]
            var seen = Set<UInt64>()
            while seen.count < count, let reply = raw.receive() {
                #expect(seen.insert(reply.callID).inserted, "answered twice: \(reply.callID)")
                let status = try? ProtoCodec.decode(HealthCheckResponse.self, from: reply.payload).status
                answered["\(reply.statusCode.name) \(status.map { "\($0)" } ?? "-")", default: 0] += 1
            }
            #expect(seen.count == count, "every frame read is answered: \(answered)")
            #expect(answered["OK serving", default: 0] >= 64 && answered["OK notServing", default: 0] > 0,
                    "the first pass before the drain, the rest after: \(answered)")
            #expect(await eventually(seconds: 120) { server.hasStopped })
        }
    }

    /// Whole frames left in the decoder when reading paused for unread replies are answered too
    /// when the drain ends (review 33 M2: the drain stopped once the replies were written, with
    /// about 1,000 such frames unanswered). Every whole frame the server read gets its reply.
    /// (Few enough frames that the server can read them all: bytes it never reads are dropped
    /// when it closes, and a peer still sending then would make its close a reset.)
    @Test func framesWaitingWhileReadingIsPausedAreAnsweredBeforeTheDrainEnds() async throws {
        try await withInProcessServer({ $0.maxBufferedOutputBytes = 4096 }) { server in
            let raw = try server.raw(receiveBufferBytes: 4096)
            // Call ids of one size (3 varint bytes), so every frame has the same length.
            func health(_ id: UInt64) -> [UInt8] {
                Frame.encode(RequestEnvelope(callID: id, method: HealthMethods.check.path, payload: []))
            }
            raw.send(health(999_999))
            #expect(raw.receive()?.statusCode == .ok)
            var bytes: [UInt8] = []
            for id in 1_000_000..<UInt64(1_004_000) { bytes += health(id) }
            // About 150 KB: one read pass takes it all, answers until 4 KiB of replies wait
            // unread, and pauses reading with the rest whole in its decoder.
            raw.send(bytes)
            server.server.shutdown()
            var replies = 1
            while raw.receive(within: 60) != nil { replies += 1 }
            #expect(await eventually(seconds: 120) { server.hasStopped })
            let framesRead = Int(server.server.metrics.bytesReceived) / health(999_999).count
            #expect(replies == framesRead, "every whole frame read is answered")
        }
    }

    @Test func aServerWithNothingInFlightStopsAtOnce() async throws {
        try await withInProcessServer { server in
            let client = try server.client()
            defer { client.close() }
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            server.server.shutdown()
            #expect(await eventually(seconds: 120) { server.hasStopped })
            await expectStatus(.unavailable) { try await client.call(HealthMethods.check, HealthCheckRequest()) }
        }
    }
}
