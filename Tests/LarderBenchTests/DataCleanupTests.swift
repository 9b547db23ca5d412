import Foundation
import LarderAPI
import LarderTestSupport
import LarderWire
import Testing
@testable import LarderBench
import LarderSystem

@Suite("What a run creates is deleted afterwards", .offThePool)
struct DataCleanupTests {
    static func options(port: UInt16, _ extra: [String]) throws -> BenchOptions {
        try LoadEngineTests.options(port: port, extra)
    }

    @Test func getRunDeletesItsLocationsAndLeavesOthers() async throws {
        let store = FakeStore()
        store.addLocation(named: "Kitchen")
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--workload", "get", "--seed-locations", "30", "--requests", "200", "--concurrency", "4", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.callsByCode == [.ok: 200])
        let cleanup = try #require(result.cleanup)
        #expect(cleanup.prefix.hasPrefix("larder-bench-") && cleanup.prefix.count == 19)
        #expect(cleanup.deletedLocations == 30)
        #expect(cleanup.failure == nil && !cleanup.kept)
        #expect(store.locations.map(\.name) == ["Kitchen"])
        #expect(BenchReport.text(result).contains("data         deleted 30 locations and 0 meal records named \(cleanup.prefix)…"))
    }

    @Test func locationsOnManyPagesAreAllFound() async throws {
        // Pages of at most 10 locations (the real server's hold up to 1,000): a run deletes its own
        // by id, and `--clean-up`, which knows no ids, follows the pages to find them.
        let store = FakeStore(maxListedLocations: 10)
        store.addLocation(named: "Kitchen")
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--workload", "get", "--seed-locations", "30", "--requests", "50", "--concurrency", "2", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        let cleanup = try #require(result.cleanup)
        #expect(cleanup.failure == nil, "\(cleanup.failure ?? "")")
        #expect(cleanup.deletedLocations == 30)
        #expect(store.locations.map(\.name) == ["Kitchen"])
        // Knowing no ids, `--clean-up` lists: its locations are on the third page and after.
        for index in 0..<25 { store.addLocation(named: "\(cleanup.prefix)-left \(index)") }
        for index in 0..<12 { store.addLocation(named: "Shelf \(index)") }
        let address = options.server
        let swept = try await offThePool {
            try DataCleaner.sweep(prefix: cleanup.prefix, server: address, metadata: [:],
                                  connectTimeoutSeconds: 10, mealsSince: .some(nil))
        }
        #expect(swept.locations == 25)
        #expect(store.locations.map(\.name).sorted() == ["Kitchen"] + (0..<12).map { "Shelf \($0)" }.sorted())
    }

    @Test func createRunDeletesTheMealsItsCallsMade() async throws {
        let store = FakeStore()
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--workload", "create", "--requests", "300", "--concurrency", "8", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.callsByCode == [.ok: 300])
        let cleanup = try #require(result.cleanup)
        // A run by count sends its calls and no more (none is left in flight past the 300th).
        #expect(server.requestsByMethod[MealRecordMethods.createMealRecord.path] == 300)
        #expect(cleanup.deletedMeals == 300)
        #expect(store.meals.isEmpty)
        // The ids came back in the create replies: no listing was needed to find them.
        #expect(server.requestsByMethod[MealRecordMethods.listMealRecords.path] == nil)
    }

    @Test func keepDataKeepsItAndNamesTheCleanUpCommand() async throws {
        let store = FakeStore()
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--workload", "list", "--seed-meals", "12", "--requests", "20", "--keep-data", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        let cleanup = try #require(result.cleanup)
        #expect(cleanup.kept)
        #expect(store.meals.count == 12)
        #expect(store.meals.allSatisfy { $0.name.hasPrefix(cleanup.prefix + "-") })
        let text = BenchReport.cleanupText(cleanup, server: options.server)
        #expect(text.contains("kept 12 meal records named \(cleanup.prefix)…"))
        #expect(text.contains("larder bench --server 127.0.0.1:\(server.port) --clean-up \(cleanup.prefix)"))

        // The command it names deletes exactly that.
        // A blocking client: on a thread of its own, not one of the two the whole test run shares.
        let address = options.server
        let counts = try await offThePool {
            try DataCleaner.sweep(prefix: cleanup.prefix, server: address, metadata: [:],
                                  connectTimeoutSeconds: 10, mealsSince: .some(nil))
        }
        #expect(counts.meals == 12 && counts.locations == 0)
        #expect(store.meals.isEmpty)
    }

    @Test func cancelledRunStopsEarlyAndStillDeletes() async throws {
        let store = FakeStore()
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--workload", "mix", "--mix", "get=1,create=1", "--seed-locations", "10", "--duration", "60s",
            "--concurrency", "2", "--time-limit", "90s",
        ])
        let cancellation = BenchCancellation()
        Thread {
            // Cancel once the load is running (calls are being made), as a Ctrl-C would; at the
            // latest after 120 s, when the expectations below say what went wrong.
            // (A `for … where` loop here checked all 12,000 times, copying the growing list each time.)
            var waits = 0
            while store.meals.isEmpty && waits < 12_000 {
                usleep(10_000)
                waits += 1
            }
            cancellation.cancel()
        }.start()
        let result = try await BenchRunner.run(options, cancellation: cancellation)
        // Stopped by the cancellation, not by the end of its 60 s (no wall-clock bound: a
        // loaded machine took 134 s to get this far).
        #expect(result.interrupted)
        let cleanup = try #require(result.cleanup)
        #expect(cleanup.failure == nil)
        #expect(cleanup.deletedLocations == 10 && cleanup.deletedMeals > 0)
        #expect(store.locations.isEmpty && store.meals.isEmpty)
        #expect(BenchReport.text(result).contains("interrupted  by Ctrl-C"))
    }

    @Test func cancelledWhileCreatingDataDeletesWhatWasCreated() async throws {
        let store = FakeStore()
        let cancellation = BenchCancellation()
        let server = try PingServer { request in
            // Cancel after the first batch of creates has been answered.
            if store.locations.count >= 100 { cancellation.cancel() }
            return store.reply(request)
        }
        defer { server.stop() }
        let options = try Self.options(port: server.port, ["--workload", "get", "--seed-locations", "5000"])
        let notices = LockedValue<[String]>([])
        await #expect {
            try await BenchRunner.run(options, cancellation: cancellation) { notice in notices.withLock { $0.append(notice) } }
        } throws: { error in
            (error as? RPCError)?.code == .cancelled
        }
        #expect(store.locations.isEmpty)
        #expect(notices.withLock { $0 }.contains { $0.hasPrefix("deleted ") && $0.contains("locations") })
    }

    @Test func callWithTemplatesCreatesUnderThePrefixAndDeletesIt() async throws {
        let store = FakeStore()
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--call", "/larder.v1.LocationService/CreateLocation",
            "-d", ##"{"location": {"name": "{{.Prefix}}-{{.RequestNumber}}", "colorHex": "#00AA{{randomInt 10 99}}"}}"##,
            "-m", "x-tenant: bench", "--requests", "150", "--concurrency", "4", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        // Every name is new ({{.RequestNumber}} counts), so none is refused as a duplicate.
        #expect(result.callsByCode == [.ok: 150])
        #expect(store.lastMetadata["x-tenant"] == "bench")
        let cleanup = try #require(result.cleanup)
        #expect((150...154).contains(cleanup.deletedLocations))
        #expect(store.locations.isEmpty)
        #expect(BenchReport.text(result).contains("call /larder.v1.LocationService/CreateLocation"))
    }

    @Test func callPicksIDsFromTheSeededSet() async throws {
        let store = FakeStore()
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        let options = try Self.options(port: server.port, [
            "--call", "larder.v1.MealRecordService.GetMealRecord", "-d", #"{"id": "{{randomMealID}}"}"#,
            "--seed-meals", "7", "--requests", "100", "--concurrency", "2", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        #expect(result.callsByCode == [.ok: 100])
        #expect(result.seeded == ["7 meal records"])
        #expect(result.cleanup?.deletedMeals == 7)
        #expect(store.meals.isEmpty)
        // A read-only method creates nothing: the seeded meals are deleted by id, nothing is listed.
        #expect(server.requestsByMethod[MealRecordMethods.listMealRecords.path] == nil)
    }

    @Test func aRenderingThatDoesNotFitStopsTheRun() async throws {
        let store = FakeStore()
        let server = try PingServer(reply: store.reply)
        defer { server.stop() }
        // calories is an int32: most values of this range do not fit.
        let options = try Self.options(port: server.port, [
            "--call", "/larder.v1.MealRecordService/CreateMealRecord",
            "-d", #"{"mealRecord": {"name": "{{.Prefix}}", "calories": {{randomInt 0 9000000000}}}}"#,
            "--requests", "1000", "--concurrency", "1", "--time-limit", "300s",
        ])
        let result = try await BenchRunner.run(options)
        let failure = try #require(result.stopReason)
        #expect(failure.contains("does not fit larder.v1.CreateMealRecordRequest"))
        #expect(result.calls < 1000)
        #expect(store.meals.isEmpty)
    }
}
