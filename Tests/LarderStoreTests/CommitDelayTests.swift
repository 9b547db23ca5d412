import Dispatch
import Foundation
import LarderAPI
import LarderSQLite
import LarderStore
import LarderTestSupport
import LarderWire
import Testing

/// The writer's commit delay through a real SQLite store, set far longer than any test may
/// take: whatever should end the wait early must, or the test times out.
@Suite struct CommitDelayTests {
    static let hourMicroseconds = 3_600 * 1_000_000

    /// A SQLite store in a fresh directory whose writer waits up to an hour for company.
    final class SlowCommitStore {
        let directory: URL
        let store: SQLiteStore

        init(maxWriteBatch: Int) throws {
            directory = try makeTemporaryDirectory(prefix: "larder-commit-delay")
            store = try SQLiteStore.open(path: directory.appendingPathComponent("test.sqlite").path, options: .init(
                durability: .normal, seed: false, maxWriteBatch: maxWriteBatch,
                commitDelayMicroseconds: CommitDelayTests.hourMicroseconds))
        }

        deinit {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Creates "first" and "second" (results 0 and 1) in one batch: the writer takes
        /// both at once, so it waits for more.
        func createTwoTogether(_ results: GroupCommitTests.Results<Location>) {
            store.submitBatch {
                create("first", results, 0)
                create("second", results, 1)
            }
        }

        func create(_ name: String, _ results: GroupCommitTests.Results<Location>, _ index: Int) {
            results.group.enter()
            store.write({ w throws(RPCError) in
                try Operations.createLocation(CreateLocationRequest(location: Location(name: name, colorHex: "#123456")), w)
            }, completion: { results.record(index, $0) })
        }
    }

    @Test func theDefaultDependsOnDurability() {
        #expect(SQLiteStore.Options(durability: .normal).commitDelayMicroseconds == 200)
        #expect(SQLiteStore.Options(durability: .full).commitDelayMicroseconds == 0)
        #expect(SQLiteStore.Options(durability: .normal, commitDelayMicroseconds: 0).commitDelayMicroseconds == 0)
    }

    @Test func aLoneWriteCommitsAtOnce() throws {
        let db = try SlowCommitStore(maxWriteBatch: 8)
        let results = GroupCommitTests.Results<Location>()
        db.create("alone", results, 0)
        #expect(results.group.wait(timeout: .now() + 300) == .success)
        #expect(results.all.values.allSatisfy { (try? $0.get()) != nil })
    }

    /// Two writes queued together wait; two more make the batch full, and all four commit.
    @Test func writesWaitUntilTheBatchIsFull() throws {
        let db = try SlowCommitStore(maxWriteBatch: 4)
        let results = GroupCommitTests.Results<Location>()
        db.createTwoTogether(results)
        db.create("third", results, 2)
        db.create("fourth", results, 3)
        #expect(results.group.wait(timeout: .now() + 300) == .success)
        #expect(results.all.count == 4 && results.all.values.allSatisfy { (try? $0.get()) != nil })
    }

    /// Closing the store ends the wait: the writes waiting commit and are answered.
    @Test func closingCommitsTheWritesThatWait() throws {
        let db = try SlowCommitStore(maxWriteBatch: 8)
        let results = GroupCommitTests.Results<Location>()
        db.createTwoTogether(results)
        let closed = DispatchSemaphore(value: 0)
        let store = db.store
        Thread.detachNewThread {
            store.close()
            closed.signal()
        }
        #expect(closed.wait(timeout: .now() + 300) == .success)
        #expect(results.group.wait(timeout: .now() + 300) == .success)
        #expect(results.all.count == 2 && results.all.values.allSatisfy { (try? $0.get()) != nil })
        let reopened = try SQLiteStore.open(path: db.directory.appendingPathComponent("test.sqlite").path,
                                            options: .init(seed: false))
        defer { reopened.close() }
        let waiter = Waiter<ListLocationsResponse>()
        reopened.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) },
                      completion: waiter.finish)
        #expect(Set(try waiter.wait().get().locations.map(\.name)) == ["first", "second"])
    }
}
