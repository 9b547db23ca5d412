import Dispatch
import Foundation
import LarderAPI
import CSQLite
@testable import LarderSQLite
import LarderTestSupport
import LarderStore
import LarderWire
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import LarderSystem

/// Point reads (`ReadCost.point`) submitted inside `submitBatch`: with SQLite they run on the
/// submitting thread when its outermost batch ends; everything else goes to the reader threads.
@Suite(.offThePool) struct PointReadTests {
    /// What each completion saw: its thread, its result, and whether the batch body had returned.
    final class Completions: Sendable {
        struct Entry: Sendable {
            let thread: UInt
            let afterBody: Bool
            let result: Result<Location, RPCError>
        }

        private let entries = LockedValue<[Int: Entry]>([:])
        let bodyReturned = Atomic<Bool>(false)
        let group = DispatchGroup()

        func record(_ index: Int, _ result: Result<Location, RPCError>) {
            let entry = Entry(thread: UInt(pthread_self()), afterBody: bodyReturned.load(ordering: .acquiring),
                              result: result)
            entries.withLock { $0[index] = entry }
            group.leave()
        }

        var all: [Int: Entry] { entries.withLock { $0 } }
        var count: Int { entries.withLock { $0.count } }
    }

    private static var thisThread: UInt { UInt(pthread_self()) }

    private static func created(in db: TestDatabase, _ name: String) throws -> Location {
        try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: name, colorHex: "#224466")))
    }

    private static func submitGet(_ store: any Store, _ id: String, cost: ReadCost, index: Int, to completions: Completions) {
        completions.group.enter()
        store.read(cost, { r throws(RPCError) in try Operations.getLocation(GetLocationRequest(id: id), r) },
                   completion: { completions.record(index, $0) })
    }

    @Test func pointReadsOfABatchRunOnTheSubmittingThreadWhenItEnds() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "pantry")
        let completions = Completions()
        let queried = Completions()
        db.store.submitBatch {
            for index in 0..<3 { Self.submitGet(db.store, location.id, cost: .point, index: index, to: completions) }
            Self.submitGet(db.store, location.id, cost: .query, index: 0, to: queried)
            #expect(completions.count == 0, "a point read waits for the batch to end")
            completions.bodyReturned.store(true, ordering: .releasing)
        }
        // Already answered, with no wait: they ran inside submitBatch, on this thread.
        let entries = completions.all
        #expect(entries.count == 3)
        for entry in entries.values {
            #expect(entry.thread == Self.thisThread)
            #expect(entry.afterBody)
            #expect(try entry.result.get() == location)
        }
        #expect(queried.group.wait(timeout: .now() + 120) == .success)
        #expect(queried.all[0]?.thread != Self.thisThread, "a query read runs on a reader thread")
        #expect(try queried.all[0]?.result.get() == location)
    }

    @Test func aPointReadSeesWhatCommittedBeforeItAndNotFoundIsAnError() throws {
        let db = try TestDatabase(.sqlite)
        let completions = Completions()
        var ids: [String] = []
        for round in 0..<5 {
            // Each round's write committed before the batch: the point read's snapshot holds it.
            ids.append(try Self.created(in: db, "shelf \(round)").id)
            db.store.submitBatch {
                for (index, id) in ids.enumerated() {
                    Self.submitGet(db.store, id, cost: .point, index: round * 10 + index, to: completions)
                }
                Self.submitGet(db.store, "00000000-0000-4000-8000-000000000000", cost: .point, index: round * 10 + 9,
                               to: completions)
            }
        }
        let entries = completions.all
        #expect(entries.count == 20, "15 gets of existing rows and 5 of a missing one")
        for round in 0..<5 {
            for index in 0...round {
                #expect((try? entries[round * 10 + index]?.result.get())?.name == "shelf \(index)")
            }
            guard case .failure(let error) = entries[round * 10 + 9]?.result else {
                Issue.record("round \(round): the missing id was found")
                continue
            }
            #expect(error.code == .notFound)
        }
    }

    @Test func aPointReadOutsideABatchGoesToAReader() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "cellar")
        let completions = Completions()
        Self.submitGet(db.store, location.id, cost: .point, index: 0, to: completions)
        #expect(completions.group.wait(timeout: .now() + 120) == .success)
        #expect(completions.all[0]?.thread != Self.thisThread)
        #expect(try completions.all[0]?.result.get() == location)
    }

    @Test func nestedBatchesRunTheirPointReadsWhenTheOutermostEnds() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "attic")
        let completions = Completions()
        db.store.submitBatch {
            db.store.submitBatch {
                Self.submitGet(db.store, location.id, cost: .point, index: 0, to: completions)
            }
            #expect(completions.count == 0, "the inner batch ended, the outer one did not")
            Self.submitGet(db.store, location.id, cost: .point, index: 1, to: completions)
        }
        #expect(completions.count == 2)
        #expect(completions.all.values.allSatisfy { $0.thread == Self.thisThread })
    }

    @Test func pointReadsBeyondTheBatchLimitGoToTheReaders() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "garage")
        let limit = StoreExecutor.Options().maxBatchPointReads
        let completions = Completions()
        db.store.submitBatch {
            for index in 0..<(limit + 10) {
                Self.submitGet(db.store, location.id, cost: .point, index: index, to: completions)
            }
        }
        #expect(completions.group.wait(timeout: .now() + 120) == .success)
        let entries = completions.all
        #expect(entries.count == limit + 10)
        #expect(entries.values.filter { $0.thread == Self.thisThread }.count == limit)
        #expect(entries.values.allSatisfy { (try? $0.result.get()) == location })
    }

    /// One thread collects at a time; another thread's batch hands its point reads to the readers.
    @Test func aSecondThreadsBatchUsesTheReaders() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "hall")
        let store = db.store
        let first = Completions()
        let second = Completions()
        let insideFirst = DispatchSemaphore(value: 0)
        let secondSubmitted = DispatchSemaphore(value: 0)
        let firstThread = LockedValue<UInt>(0)
        Thread.detachNewThread {
            store.submitBatch {
                firstThread.withLock { $0 = UInt(pthread_self()) }
                Self.submitGet(store, location.id, cost: .point, index: 0, to: first)
                insideFirst.signal()
                // Stay inside this batch until the other thread's batch was submitted.
                _ = secondSubmitted.wait(timeout: .now() + 120)
            }
        }
        #expect(insideFirst.wait(timeout: .now() + 120) == .success)
        store.submitBatch { Self.submitGet(store, location.id, cost: .point, index: 0, to: second) }
        // Not collected by this thread: its batch ended and nothing ran here.
        let answeredHere = second.all[0]?.thread == Self.thisThread
        secondSubmitted.signal()
        #expect(!answeredHere)
        #expect(first.group.wait(timeout: .now() + 120) == .success)
        #expect(second.group.wait(timeout: .now() + 120) == .success)
        let readers = second.all[0]?.thread
        #expect(readers != Self.thisThread && readers != firstThread.withLock { $0 })
        #expect(first.all[0]?.thread == firstThread.withLock { $0 })
        #expect(try second.all[0]?.result.get() == location)
    }

    @Test func withoutInlinePointReadsEveryReadGoesToTheReaders() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-point-reads")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore.open(path: directory.appendingPathComponent("db.sqlite").path,
                                         options: .init(durability: .normal, seed: false, inlinePointReads: false))
        defer { store.close() }
        let completions = Completions()
        store.submitBatch {
            Self.submitGet(store, "00000000-0000-4000-8000-000000000000", cost: .point, index: 0, to: completions)
        }
        #expect(completions.group.wait(timeout: .now() + 120) == .success)
        #expect(completions.all[0]?.thread != Self.thisThread)
        guard case .failure(let error) = completions.all[0]?.result else {
            Issue.record("a missing id was found")
            return
        }
        #expect(error.code == .notFound)
    }

    @Test func aPointReadCollectedAfterCloseFailsUnavailable() throws {
        let db = try TestDatabase(.sqlite)
        let completions = Completions()
        db.store.submitBatch {
            db.store.close()
            Self.submitGet(db.store, "00000000-0000-4000-8000-000000000000", cost: .point, index: 0, to: completions)
        }
        #expect(completions.group.wait(timeout: .now() + 120) == .success)
        guard case .failure(let error) = completions.all[0]?.result else {
            Issue.record("a read after close succeeded")
            return
        }
        #expect(error.code == .unavailable)
    }

    /// The point reads of one batch and the next share a read transaction while nothing
    /// commits; it stays open between batches until released, and close ends it too.
    @Test func theReadTransactionOfPointReadsIsHeldUntilReleased() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "larder")
        #expect(!db.store.holdsReadSnapshot)
        let completions = Completions()
        db.store.submitBatch { Self.submitGet(db.store, location.id, cost: .point, index: 0, to: completions) }
        #expect(db.store.holdsReadSnapshot)
        db.store.submitBatch {}
        #expect(db.store.holdsReadSnapshot, "a batch with nothing committed since keeps it")
        db.store.submitBatch { Self.submitGet(db.store, location.id, cost: .point, index: 1, to: completions) }
        db.store.releaseReadSnapshot()
        #expect(!db.store.holdsReadSnapshot)
        db.store.submitBatch { Self.submitGet(db.store, location.id, cost: .point, index: 2, to: completions) }
        #expect(db.store.holdsReadSnapshot)
        db.store.close()
        #expect(!db.store.holdsReadSnapshot, "close ends it")
        let allFound = completions.all.values.allSatisfy { (try? $0.result.get()) == location }
        #expect(completions.count == 3 && allFound)
    }

    /// A commit ends the held read transaction when the next batch ends, reads or not (a
    /// snapshot kept under a steady write load would keep the WAL from being copied and
    /// restarted), and a point read after a commit sees it.
    @Test func aCommitEndsTheHeldReadTransaction() throws {
        let db = try TestDatabase(.sqlite)
        let first = try Self.created(in: db, "bin 1")
        let completions = Completions()
        db.store.submitBatch { Self.submitGet(db.store, first.id, cost: .point, index: 0, to: completions) }
        #expect(db.store.holdsReadSnapshot)
        let second = try Self.created(in: db, "bin 2")
        #expect(db.store.holdsReadSnapshot, "held until a batch ends")
        db.store.submitBatch {}
        #expect(!db.store.holdsReadSnapshot, "a batch ending after a commit ends it")
        let third = try Self.created(in: db, "bin 3")
        db.store.submitBatch {
            Self.submitGet(db.store, second.id, cost: .point, index: 1, to: completions)
            Self.submitGet(db.store, third.id, cost: .point, index: 2, to: completions)
        }
        let fourth = try Self.created(in: db, "bin 4")
        db.store.submitBatch { Self.submitGet(db.store, fourth.id, cost: .point, index: 3, to: completions) }
        let entries = completions.all
        #expect(entries.count == 4)
        #expect(try entries[1]?.result.get() == second)
        #expect(try entries[2]?.result.get() == third)
        #expect(try entries[3]?.result.get() == fourth, "a read in a batch after a commit sees that commit")
    }

    /// A change that does not go through the store's writer (another connection to the
    /// file) is seen after at most `maxHeldReadBatches` batches of point reads, however
    /// busy the submitter is.
    @Test func aChangeFromAnotherConnectionIsSeenWithinTheHeldBatchLimit() throws {
        let db = try TestDatabase(.sqlite)
        let location = try Self.created(in: db, "shed")
        let limit = StoreExecutor.Options().maxHeldReadBatches
        let completions = Completions()
        db.store.submitBatch { Self.submitGet(db.store, location.id, cost: .point, index: 0, to: completions) }
        let other = try SQLiteConnection(path: db.path, flags: SQLITE_OPEN_READWRITE)
        defer { other.close() }
        try other.execute("PRAGMA busy_timeout=10000")
        try other.execute("UPDATE locations SET name = 'renamed shed' WHERE id = '\(location.id)'")
        var seenAfter: Int?
        for batch in 1...(limit + 1) {
            db.store.submitBatch { Self.submitGet(db.store, location.id, cost: .point, index: batch, to: completions) }
            if (try? completions.all[batch]?.result.get())?.name == "renamed shed" {
                seenAfter = batch
                break
            }
        }
        #expect(seenAfter != nil, "not seen within \(limit + 1) batches")
    }
}
