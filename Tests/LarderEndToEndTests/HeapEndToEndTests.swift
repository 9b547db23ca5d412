import Foundation
import LarderTestSupport
import LarderAPI
import LarderWire
import Testing

/// How the server's heap serves big replies (skipped under ThreadSanitizer, whose allocator
/// ignores malloc's settings: scripts/test.sh).
@Suite("Heap", .offThePool)
struct HeapEndToEndTests {
    /// Minor page faults the process has taken (/proc/PID/stat, field 10).
    static func minorFaults(pid: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 7 ? Int(fields[7]) : nil
    }

    /// Sends pipelined calls of `method`, one per payload, on `raw` and reads every reply.
    static func call(_ raw: RawConnection, _ method: String, payloads: [[UInt8]], firstID: UInt64) -> [ResponseEnvelope] {
        var bytes: [UInt8] = []
        for (index, payload) in payloads.enumerated() {
            Frame.append(ProtoCodec.encode(RequestEnvelope(callID: firstID + UInt64(index), method: method, payload: payload)),
                         to: &bytes)
        }
        raw.send(bytes)
        return payloads.compactMap { _ in raw.receive() }
    }

    /// Sends `count` pipelined calls of `method` with `payload` on `raw` and reads every reply.
    static func call(_ raw: RawConnection, _ method: String, _ payload: [UInt8], count: Int, firstID: UInt64) -> [ResponseEnvelope] {
        call(raw, method, payloads: Array(repeating: payload, count: count), firstID: firstID)
    }

    /// Pages of 1,000 meal records (~0.4 MB each): with glibc's sliding thresholds each one's
    /// pages went back to the system once freed and were faulted in again for the next, about
    /// 150–400 page faults a reply (release build); with the thresholds fixed (ServerMain) a
    /// few. The count does not depend on the machine's speed, only on the heap's behaviour.
    @Test func bigRepliesReuseTheHeapInsteadOfFaultingPagesInAgain() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed", "--durability", "normal", "--log-level", "debug"])
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        let name = String(repeating: "🍲", count: 94)  // 376 bytes of UTF-8, within 100 characters
        let creates = await offThePool { () -> [ResponseEnvelope] in
            (0..<10).flatMap { batch in
                let requests = (0..<100).map { index in
                    ProtoCodec.encode(CreateMealRecordRequest(mealRecord: MealRecord(
                        name: "\(name) \(batch * 100 + index)", calories: 1, category: .lunch)))
                }
                return Self.call(raw, MealRecordMethods.createMealRecord.path, payloads: requests,
                                 firstID: UInt64(batch * 100 + 1))
            }
        }
        #expect(creates.count == 1000 && creates.allSatisfy { $0.statusCode == .ok }, "\(creates.first { $0.statusCode != .ok }.map { "\($0.statusCode): \($0.statusMessage)" } ?? "")")
        let list = ProtoCodec.encode(ListMealRecordsRequest(pageSize: 1000))
        let method = MealRecordMethods.listMealRecords.path
        // Warm-up: the heap grows to the working set of 8 replies in flight.
        let warm = await offThePool { (0..<3).flatMap { round in Self.call(raw, method, list, count: 8, firstID: 10_000 + UInt64(round) * 8) } }
        #expect(warm.count == 24 && warm.allSatisfy { $0.statusCode == .ok })
        #expect(warm.first.map { $0.payload.count > 300_000 } == true, "a page of 1,000 records is big")
        let rounds = 6
        // A machine that stalls the rounds for 5 s lets the server give its free heap back
        // (event=heap_returned), and the next round faults it in again, as it should: such a
        // measurement is made again, at most 3 times.
        let heapReturns = { [server] in server.stderr.components(separatedBy: "event=heap_returned").count }
        var perReply = Double.infinity
        for attempt in 0..<3 {
            let returnsBefore = heapReturns()
            let before = try #require(Self.minorFaults(pid: server.processIdentifier))
            let replies = await offThePool {
                (0..<rounds).flatMap { round in
                    Self.call(raw, method, list, count: 8, firstID: 20_000 + UInt64(attempt * rounds + round) * 8)
                }
            }
            let after = try #require(Self.minorFaults(pid: server.processIdentifier))
            #expect(replies.count == rounds * 8 && replies.allSatisfy { $0.statusCode == .ok })
            perReply = Double(after - before) / Double(rounds * 8)
            if heapReturns() == returnsBefore { break }
        }
        #expect(perReply < 30, "\(perReply) page faults per 0.4 MB reply")
    }

    /// What big replies left in the heaps is given back once the server has sent nothing for
    /// 5 s (a burst whose client reads its replies never fills the memory budget, whose fall
    /// gives memory back too), once per quiet spell.
    @Test func freeHeapIsGivenBackOnceTheServerIsQuiet() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed", "--log-level", "debug"])
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        let list = ProtoCodec.encode(ListLocationsRequest())
        let replies = await offThePool { Self.call(raw, LocationMethods.listLocations.path, list, count: 8, firstID: 1) }
        #expect(replies.count == 8 && replies.allSatisfy { $0.statusCode == .ok })
        #expect(await server.waitForLog("event=heap_returned quiet_seconds=5"))
        // Quiet since: no second line until traffic comes again.
        try await Task.sleep(for: .seconds(6))
        #expect(server.stderr.components(separatedBy: "event=heap_returned").count == 2)
        let again = await offThePool { Self.call(raw, LocationMethods.listLocations.path, list, count: 1, firstID: 100) }
        #expect(again.count == 1)
        #expect(await eventually(seconds: 60, every: .milliseconds(50)) {
            server.stderr.components(separatedBy: "event=heap_returned").count == 3
        }, "once more after the new traffic")
    }

    /// Connections that come and go without a byte count as traffic (audit 12: after a flood of
    /// TLS handshakes that never finished, 131 MB stayed resident until the next call).
    @Test func connectionsAloneAreTrafficForGivingHeapBack() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed", "--log-level", "debug"])
        defer { server.stop() }
        for _ in 0..<20 { _ = try RawConnection(port: server.port) }  // each closed at once
        #expect(await server.waitForLog("event=heap_returned quiet_seconds=5"))
    }
}
