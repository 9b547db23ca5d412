import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing
import LarderServer
import LarderSystem

/// What the server admits: calls in flight per connection, and the memory budget.
@Suite("Server admission (in process)", .offThePool)
struct AdmissionTests {
    @Test func callsBeyondThePerConnectionLimitGetResourceExhausted() async throws {
        try await withInProcessServer({ $0.maxCallsPerConnection = 2 }) { server in
            let client = try server.client()
            defer { client.close() }
            server.store.hold()
            let refused = Refusals()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        do {
                            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
                        } catch let error as RPCError where error.code == .resourceExhausted {
                            refused.errors.withLock { $0.append(error) }
                        }
                    }
                }
                // Two calls reach the (held) store; the third is refused without waiting for them. The
                // three calls are child tasks, run by the test executor's threads that every suite
                // marked `.offThePool` shares; on a busy run (under ThreadSanitizer) tasks once waited
                // over a minute for a thread: a long wait, ended early.
                #expect(await eventually(seconds: 600) {
                    server.store.submittedCount == 2 && refused.errors.withLock { $0.count } == 1
                })
                let message = refused.errors.withLock { $0.first?.message } ?? ""
                #expect(message.contains("too many calls in flight on this connection (limit 2)"), "\(message)")
                // A call answered on the loop holds nothing: it is admitted at the limit.
                #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
                // Another connection has limits of its own.
                let other = try server.client()
                defer { other.close() }
                _ = try await other.call(HealthMethods.check, HealthCheckRequest())
                server.store.release()
                try await group.waitForAll()
            }
            #expect(refused.errors.withLock { $0.count } == 1, "the two admitted calls finish OK")
            #expect(server.store.submittedCount == 2)
            // Below the limit again.
            #expect(try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 1)
        }
    }

    /// The calls refused so far, from the tasks that made them.
    final class Refusals: Sendable {
        let errors = LockedValue<[RPCError]>([])
    }

    /// `count` locations with long names: one ListLocations reply is about 25 KB per 200.
    static func addLocations(_ count: Int, to client: LarderClient) async throws {
        for index in 0..<count {
            let name = "Admission location \(index) " + String(repeating: "x", count: 70)
            _ = try await client.call(LocationMethods.createLocation,
                                      CreateLocationRequest(location: Location(name: name, colorHex: "#102030")))
        }
    }

    /// Calls for the store that find their connection over its share when they come to run
    /// wait for the peer to read, and then run: none is refused (before, a client reading as
    /// fast as it could got RESOURCE_EXHAUSTED for the replies just made).
    @Test func callsOfAPeerOverItsShareOfTheMemoryBudgetWaitForItToRead() async throws {
        try await withInProcessServer({
            $0.memoryBudgetBytes = 1024 * 1024
            $0.writeStallTimeoutSeconds = 0
        }) { server in
            let client = try server.client()
            defer { client.close() }
            try await Self.addLocations(200, to: client)
            // 500 replies of ~27 KB (13.5 MB) to a peer that reads nothing at first.
            let raw = try server.raw(receiveBufferBytes: 256 * 1024)
            let count = 500  // their requests held (~1 KB each) stay within the 1 MiB budget
            var frames: [UInt8] = []
            for id in 1...count { Frame.append(ProtoCodec.encode(Self.listLocations(UInt64(id))), to: &frames) }
            let sent = frames
            await offThePool { raw.send(sent) }
            // Some run; the rest wait, holding no reply.
            #expect(await eventually(seconds: 120) {
                let metrics = try? await client.call(AdminMethods.getMetrics, GetMetricsRequest())
                let lists = metrics?.methods.first { $0.method == LocationMethods.listLocations.path }
                return (lists?.totalCalls ?? 0) > 0
            })
            let replies = await offThePool { () -> [ResponseEnvelope] in
                var replies: [ResponseEnvelope] = []
                while replies.count < count, let reply = raw.receive() { replies.append(reply) }
                return replies
            }
            #expect(replies.count == count, "every call is answered")
            let refused = replies.filter { $0.statusCode != .ok }
            #expect(refused.isEmpty, "\(refused.count) refused, first: \(refused.first?.statusMessage ?? "")")
            #expect(Set(replies.map(\.callID)) == Set((1...count).map(UInt64.init)))
        }
    }

    static func listLocations(_ callID: UInt64) -> RequestEnvelope {
        RequestEnvelope(callID: callID, method: LocationMethods.listLocations.path,
                        payload: ProtoCodec.encode(ListLocationsRequest()))
    }
}
