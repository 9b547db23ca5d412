import LarderAPI
import LarderClient
import LarderHTTP2
import LarderTestSupport
import LarderWire
import Testing
@testable import LarderServer

/// Calls for the database that wait for their connection to read (`ConnectionUsage.park`):
/// what they may hold, and what becomes of them when the connection closes.
@Suite("Parked calls (in process)", .serialized, .offThePool)
struct ParkingTests {
    static let list = MealRecordMethods.listMealRecords.path

    /// Over HTTP/2 a closed flow-control window does not stop the server reading, so a peer
    /// that never opens it could park 1,024 calls of 4 MiB each, outside the budget (review of
    /// 47ace31: 150 calls with 1 MB page tokens grew the server by 155 MB, the budget saw 230 KB).
    @Test func anHTTP2PeerWithAClosedWindowParksAtMostItsLimitInRequests() async throws {
        try await withInProcessServer({
            $0.maxBufferedOutputBytes = 64 * 1024
            $0.writeStallTimeoutSeconds = 0
        }) { server in
            // Pages of 50 records of ~100-character names: ~7 KB each.
            let client = try server.client()
            defer { client.close() }
            try await Self.seed(60, client)
            var options = GRPCClientSession.Options()
            options.initialWindowSize = 0  // the server may send no DATA at all
            let h2 = try HTTP2TestClient(port: server.port, options: options)
            // Replies held in the session for the closed window: over --max-output-bytes. Each
            // list either runs (its response HEADERS come; its DATA cannot) or parks.
            var lists: [Int32] = []
            for _ in 0..<40 { lists.append(try h2.start(Self.list, messages: [ProtoCodec.encode(ListMealRecordsRequest())])) }
            let budget = server.server.budget
            let warm = lists
            let settled = await offThePool {
                h2.read(seconds: 120) { warm.count { h2.response($0)?.headers.isEmpty == false } + budget.parkedCalls == warm.count }
            }
            try #require(settled && budget.parkedCalls > 0, "\(budget.parkedCalls) of 40 lists parked")
            // Then calls carrying 100 KB page tokens, one at a time, each followed until it is
            // answered or parks: the first parks, and with 100 KB waiting, over the 64 KiB
            // limit, each next one is refused at once.
            var request = ListMealRecordsRequest()
            request.pageToken = String(repeating: "a", count: 100_000)
            var refusals: [String] = []
            var outcomes: [String] = []
            let expected = ["parked"] + Array(repeating: "8", count: 19)
            for index in 0..<20 {
                let parksBefore = budget.parksSinceStart
                let id = try h2.start(Self.list, messages: [ProtoCodec.encode(request)])
                // Until it ends, parks, or runs (its HEADERS come; its DATA cannot).
                await offThePool {
                    _ = h2.read(seconds: 120) {
                        h2.response(id)?.ended == true || budget.parksSinceStart > parksBefore
                            || h2.response(id)?.headers.isEmpty == false
                    }
                }
                if let trailers = h2.response(id)?.trailers, h2.response(id)?.ended == true {
                    outcomes.append(trailers["grpc-status"] ?? "no status")
                    if trailers["grpc-status"] == "8" { refusals.append(GRPCPercentEncoding.decode((trailers["grpc-message"] ?? "").utf8)) }
                } else {
                    outcomes.append(budget.parksSinceStart > parksBefore ? "parked"
                                    : h2.response(id)?.headers.isEmpty == false ? "ran" : "nothing")
                }
                if outcomes[index] != expected[index] { break }  // a regression fails now, not 20 bounds later
            }
            #expect(outcomes == expected, "\(outcomes)")
            #expect(refusals.first?.contains("bytes of calls waiting for room, for it to read its replies") == true,
                    "\(refusals.first ?? "")")
            // What waits is in the budget: at least the parked requests.
            #expect(server.server.budget.usedBytes >= 100_000)
        }
    }

    /// Creates `count` meal records with ~100-character names (~140 bytes each in a page).
    static func seed(_ count: Int, _ client: LarderClient) async throws {
        for index in 0..<count {
            let meal = MealRecord(name: "meal \(index) " + String(repeating: "x", count: 90), calories: 100, category: .lunch)
            _ = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(mealRecord: meal))
        }
    }

    static func listsByCode(_ client: LarderClient) async throws -> [String: UInt64] {
        let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
        return metrics.methods.first { $0.method == Self.list }?.callsByCode ?? [:]
    }

    /// Writes never park: the writer applies a connection's pipelined writes in the order they
    /// came, even while big replies fill the connection (with parking, 3 runs in 30 left a record
    /// with an older value, every update answered OK).
    @Test func pipelinedWritesAreAppliedInOrderWhileTheConnectionIsFull() async throws {
        try await withInProcessServer({
            $0.maxBufferedOutputBytes = 16 * 1024
            $0.writeStallTimeoutSeconds = 0
        }) { server in
            let client = try server.client()
            defer { client.close() }
            try await Self.seed(400, client)
            let target = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "target", calories: 1, category: .snack)))
            let raw = try server.raw(receiveBufferBytes: 4096)
            var frames: [UInt8] = []
            var id: UInt64 = 0
            for round in 1...200 {
                id += 1
                if round % 4 == 0 {
                    let update = UpdateMealRecordRequest(mealRecord: MealRecord(id: target.id, calories: Int32(round)),
                                                         updateMask: FieldMask(paths: ["calories"]))
                    Frame.append(ProtoCodec.encode(RequestEnvelope(callID: id, method: MealRecordMethods.updateMealRecord.path,
                                                                   payload: ProtoCodec.encode(update))), to: &frames)
                } else {
                    Frame.append(ProtoCodec.encode(RequestEnvelope(callID: id, method: Self.list,
                                                                   payload: ProtoCodec.encode(ListMealRecordsRequest(pageSize: 400)))),
                                 to: &frames)
                }
            }
            let sent = frames
            let count = Int(id)
            let replies = await offThePool { () -> [ResponseEnvelope] in
                raw.send(sent)
                var replies: [ResponseEnvelope] = []
                while replies.count < count, let reply = raw.receive() { replies.append(reply) }
                return replies
            }
            #expect(replies.count == count && replies.allSatisfy { $0.statusCode == .ok })
            let final = try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: target.id))
            #expect(final.calories == 200, "the last update wins")
        }
    }
}
