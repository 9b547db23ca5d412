import Foundation
import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

@Suite("Server lifecycle", .offThePool)
struct LifecycleEndToEndTests {
    @Test(arguments: Backend.all)
    func dataSurvivesRestartAndDefaultsAreNotReseeded(backend: Backend) async throws {
        let server = try await ServerProcess(backend: backend)
        var client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        let kitchen = try #require(try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            .locations.first { $0.name == "廚房" })
        _ = try await client.call(LocationMethods.deleteLocation, DeleteLocationRequest(id: kitchen.id))
        let meal = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
            mealRecord: MealRecord(name: "拉麵", calories: 700, category: .dinner)))
        client.close()
        #expect(server.stop() == 0, "SIGTERM exits 0")
        // stop() returns with the whole log read, its last line included (a sanitizer's report at
        // exit comes last too, and stop() checks the log for one).
        #expect(server.stderr.split(separator: "\n").last?.contains("event=stopped") == true, "\(server.stderr)")

        try await server.start()
        client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { client.close(); server.stop() }
        let names = try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.map(\.name)
        #expect(Set(names) == ["客廳", "臥室", "浴室"], "a deleted default stays deleted")
        #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)) == meal)
    }

    @Test(arguments: Backend.all)
    func sigtermFinishesCallsInFlightAndRefusesNewConnections(backend: Backend) async throws {
        let server = try await ServerProcess(backend: backend)
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let writes = Task(executorPreference: BlockingWorkExecutor.shared) {
            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        do {
                            return try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                                location: Location(name: "S\(index)", colorHex: "#123456"))).name
                        } catch let error as RPCError where error.code == .unavailable {
                            return ""
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { if !$1.isEmpty { $0.append($1) } }
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        let status = server.stop()
        let acknowledged = try await writes.value
        #expect(status == 0)
        #expect(await server.waitForLog("event=draining"))
        // Every acknowledged write is in the database after the restart.
        try await server.start()
        defer { server.stop() }
        let again = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { again.close() }
        let stored = Set(try await again.call(LocationMethods.listLocations, ListLocationsRequest()).locations.map(\.name))
        #expect(Set(acknowledged).isSubset(of: stored))
    }

    /// The server keeps where each meal record is in memory, so a second one on the same
    /// SQLite file must not start; the first keeps serving.
    @Test func aSecondServerOnTheSameFileRefusesToStart() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let (status, log) = try await ServerProcess.runToExit(["--listen", "127.0.0.1:0", "--db", server.databasePath])
        #expect(status != 0)
        #expect(log.contains("is in use by another larder-server"), "\(log)")

        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let meal = try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(
            mealRecord: MealRecord(name: "粥", calories: 200, category: .breakfast)))
        #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)) == meal)
    }

    /// The database file replaced under a running server (a backup restored with `mv`): the
    /// server refuses writes from then on instead of acknowledging writes to a file nobody
    /// opens again, says so in its health and log, and a second server is refused on the new
    /// file while the first runs (they would share the WAL, which SQLite finds by path).
    @Test func aDatabaseFileReplacedUnderTheServerStopsItsWrites() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        let kept = try await client.call(LocationMethods.createLocation,
                                         CreateLocationRequest(location: Location(name: "before", colorHex: "#000000")))
        // Another file moved over the path, as `mv backup.sqlite larder.sqlite` does.
        let other = server.databasePath + ".restored"
        try Data("".utf8).write(to: URL(fileURLWithPath: other))
        #expect(rename(other, server.databasePath) == 0)
        // Noticed without a write (the checkpointer looks every 250 ms): health turns NOT_SERVING.
        #expect(try await eventually { try await client.call(HealthMethods.check, HealthCheckRequest()).status == .notServing })

        let refused = await expectStatus(.unavailable) {
            try await client.call(LocationMethods.createLocation,
                                  CreateLocationRequest(location: Location(name: "after", colorHex: "#000000")))
        }
        #expect(refused?.message.contains("was moved, replaced or deleted while larder-server ran: nothing of this call was written")
                    == true, "\(String(describing: refused))")
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .notServing)
        #expect(await server.waitForLog("event=database_file_moved"), "\(server.stderr)")
        // Reads still answer from the file the server has open.
        #expect(try await client.call(LocationMethods.getLocation, GetLocationRequest(id: kept.id)) == kept)

        let (status, log) = try await ServerProcess.runToExit(["--listen", "127.0.0.1:0", "--db", server.databasePath])
        #expect(status != 0)
        #expect(log.contains("which has its WAL file \(server.databasePath)-wal open"), "\(log)")
        // Stopped, the first server folds its WAL into the file it had and removes it, so a
        // server on the new file starts clean.
        #expect(server.stop() == 0)
        let next = try await ServerProcess(databasePath: server.databasePath)
        defer { next.stop() }
        let fresh = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: next.port))
        defer { fresh.close() }
        #expect(try await fresh.call(LocationMethods.createLocation,
                                     CreateLocationRequest(location: Location(name: "after", colorHex: "#000000"))).name == "after")
        await #expect(throws: RPCError.self) { try await fresh.call(LocationMethods.getLocation, GetLocationRequest(id: kept.id)) }
    }

    /// The WAL deleted under a running server (the latest acknowledged writes live there): the
    /// server refuses writes from then on and copies what the WAL held into the database file,
    /// so a kill -9 after it loses nothing. It went on acknowledging writes into the unlinked
    /// WAL, health SERVING, and a crash lost every one (audit 21 M1).
    @Test func aWALDeletedUnderTheServerIsCopiedAndStopsItsWrites() async throws {
        let server = try await ServerProcess(arguments: ["--no-seed"])
        defer { server.stop() }
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port))
        defer { client.close() }
        var kept: [Location] = []
        for index in 0..<40 {
            kept.append(try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                location: Location(name: "room \(index)", colorHex: "#000000"))))
        }
        #expect(unlink(server.databasePath + "-wal") == 0)
        #expect(try await eventually { try await client.call(HealthMethods.check, HealthCheckRequest()).status == .notServing })
        let refused = await expectStatus(.unavailable) {
            try await client.call(LocationMethods.createLocation,
                                  CreateLocationRequest(location: Location(name: "after", colorHex: "#000000")))
        }
        #expect(refused?.message.contains("the WAL file \"\(server.databasePath)-wal\" was deleted") == true,
                "\(String(describing: refused))")
        #expect(await server.waitForLog("event=database_wal_copied"), "\(server.stderr)")
        server.kill()

        let next = try await ServerProcess(arguments: ["--no-seed"], databasePath: server.databasePath)
        defer { next.stop() }
        let fresh = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: next.port))
        defer { fresh.close() }
        let listed = try await fresh.call(LocationMethods.listLocations, ListLocationsRequest(pageSize: 100)).locations
        #expect(Set(listed.map(\.id)) == Set(kept.map(\.id)))
    }

    @Test func unreachableServerIsUnavailable() async throws {
        let server = try await ServerProcess()
        let port = server.port
        server.stop()
        do {
            _ = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: port))
            Issue.record("connecting to a stopped server must fail")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("127.0.0.1:\(port)"))
        }
    }
}
