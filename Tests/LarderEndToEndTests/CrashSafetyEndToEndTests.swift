import Foundation
import LarderAPI
import LarderClient
import LarderSQLite
import LarderWire
import Testing
import LarderTestSupport

/// SIGKILL under write load loses no acknowledged write and leaves a sound database.
@Suite("Crash safety", .offThePool)
struct CrashSafetyEndToEndTests {
    static let rounds = 5
    static let writers = 12

    /// What the writers saw acknowledged with OK.
    struct Acknowledged: Sendable {
        var created: Set<String> = []
        /// Deletes sent: committed or not, unknown when unanswered.
        var deleting: Set<String> = []
        var deleted: Set<String> = []
    }

    @Test func sigkillUnderWriteLoadLosesNoAcknowledgedWrite() async throws {
        let server = try await ServerProcess()  // default durability: full
        defer { server.kill() }
        var expected = Acknowledged()
        for round in 1...Self.rounds {
            if round > 1 { try await server.start() }
            let acknowledged = try await Self.writeUntilKilled(server, round: round)
            #expect(!acknowledged.created.isEmpty, "round \(round): some writes were acknowledged before the kill")
            expected.created.formUnion(acknowledged.created)
            expected.deleting.formUnion(acknowledged.deleting)
            expected.deleted.formUnion(acknowledged.deleted)

            // The file as the crash left it (server dead, WAL not yet checkpointed).
            #expect(try Self.integrityCheck(server.databasePath) == "ok", "round \(round)")

            try await server.start()
            let stored = try await Self.storedMealIDs(server)
            let lost = expected.created.subtracting(expected.deleting).subtracting(stored)
            #expect(lost.isEmpty, "round \(round): \(lost.count) acknowledged creates missing, e.g. \(lost.first ?? "")")
            let resurrected = expected.deleted.intersection(stored)
            #expect(resurrected.isEmpty, "round \(round): \(resurrected.count) acknowledged deletes undone")
            server.kill()
        }
        #expect(try Self.integrityCheck(server.databasePath) == "ok")
    }

    /// Runs `writers` concurrent create/delete loops, SIGKILLs the server at a
    /// random moment once writes are flowing, and returns what was acknowledged.
    static func writeUntilKilled(_ server: ServerProcess, round: Int) async throws -> Acknowledged {
        // A deadline no busy machine reaches: a writer gives up on its first failure.
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                                      options: ClientOptions(defaultTimeout: .seconds(120)))
        defer { client.close() }
        let acknowledged = Locked(Acknowledged())
        let writes = Task(executorPreference: BlockingWorkExecutor.shared) {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        // Bounded: the server dies long before a writer gets through this.
                        for index in 0..<100_000 {
                            let id = UUID().uuidString.lowercased()
                            let record = MealRecord(id: id, name: "r\(round) w\(writer) #\(index)", calories: 1,
                                                    category: .snack)
                            do {
                                _ = try await client.call(MealRecordMethods.createMealRecord,
                                                          CreateMealRecordRequest(mealRecord: record))
                                acknowledged.withLock { _ = $0.created.insert(id) }
                                if index % 3 == 0 {
                                    acknowledged.withLock { _ = $0.deleting.insert(id) }
                                    _ = try await client.call(MealRecordMethods.deleteMealRecord,
                                                              DeleteMealRecordRequest(id: id))
                                    acknowledged.withLock { _ = $0.deleted.insert(id) }
                                }
                            } catch {
                                return  // the server is gone
                            }
                        }
                    }
                }
            }
        }
        // Wait (bounded) until writes are flowing, then kill at a random moment.
        var waited = 0
        while acknowledged.withLock({ $0.created.count }) < 20 && waited < 6000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...400)))
        server.kill()
        await writes.value
        return acknowledged.withLock { $0 }
    }

    /// Every meal record id the restarted server holds, page by page.
    static func storedMealIDs(_ server: ServerProcess) async throws -> Set<String> {
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                                      options: ClientOptions(defaultTimeout: .seconds(120)))
        defer { client.close() }
        var ids: Set<String> = []
        var token = ""
        for _ in 0..<1_000 {
            let page = try await client.call(MealRecordMethods.listMealRecords,
                                             ListMealRecordsRequest(pageSize: 1000, pageToken: token))
            ids.formUnion(page.mealRecords.map(\.id))
            token = page.nextPageToken
            if token.isEmpty { break }
        }
        return ids
    }

    /// `PRAGMA integrity_check` on a read-only connection.
    static func integrityCheck(_ path: String) throws -> String {
        let connection = try SQLiteConnection(path: path, flags: 0x1)  // SQLITE_OPEN_READONLY
        defer { connection.close() }
        let statement = try connection.prepare("PRAGMA integrity_check")
        var lines: [String] = []
        while try statement.step() { lines.append(statement.string(at: 0)) }
        return lines.joined(separator: "\n")
    }
}
