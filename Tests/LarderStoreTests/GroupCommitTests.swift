import Foundation
import Dispatch
import LarderAPI
import LarderSQLite
import LarderStore
import LarderWire
import Synchronization
import Testing
import LarderSystem
import LarderTestSupport

/// The executor: concurrent writes committed together, savepoints, and closing.
@Suite(.offThePool) struct GroupCommitTests {
    /// Results collected from completions on store threads.
    final class Results<Value: Sendable>: Sendable {
        private let values = LockedValue<[Int: Result<Value, RPCError>]>([:])
        let group = DispatchGroup()

        func record(_ index: Int, _ result: Result<Value, RPCError>) {
            values.withLock { $0[index] = result }
            group.leave()
        }

        var all: [Int: Result<Value, RPCError>] { values.withLock { $0 } }
    }

    /// Submissions held by `submitBatch` wake the store threads when it returns:
    /// nothing is left waiting for a wake-up that never comes, reads and writes alike.
    @Test(arguments: Backend.all)
    func everyJobSubmittedInABatchCompletes(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = db.store
        let writes = Results<Location>()
        let reads = Results<ListLocationsResponse>()
        for round in 0..<20 {
            store.submitBatch {
                for index in 0..<5 {
                    writes.group.enter()
                    let name = "batch \(round)-\(index)"
                    store.write({ w throws(RPCError) in
                        try Operations.createLocation(CreateLocationRequest(location: Location(name: name, colorHex: "#123456")), w)
                    }, completion: { writes.record(round * 5 + index, $0) })
                    reads.group.enter()
                    store.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) },
                               completion: { reads.record(round * 5 + index, $0) })
                }
            }
            // Each round waits, so the store threads are idle (waiting) when the next batch starts.
            #expect(writes.group.wait(timeout: .now() + 120) == .success, "round \(round): writes completed")
            #expect(reads.group.wait(timeout: .now() + 120) == .success, "round \(round): reads completed")
        }
        #expect(writes.all.count == 100 && writes.all.values.allSatisfy { (try? $0.get()) != nil })
        #expect(reads.all.count == 100 && reads.all.values.allSatisfy { (try? $0.get()) != nil })
    }

    @Test(arguments: Backend.all)
    func concurrentWritesFailOnlyTheDuplicates(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = db.store
        // 200 writes: 170 distinct names, then 30 that repeat one of them.
        let names = (0..<200).map { $0 < 170 ? "room \($0)" : "room \(($0 * 7) % 170)" }
        let results = Results<Location>()
        for _ in names { results.group.enter() }
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            let request = CreateLocationRequest(location: Location(name: names[index], colorHex: "#000000"))
            store.write({ w throws(RPCError) in try Operations.createLocation(request, w) }) {
                results.record(index, $0)
            }
        }
        results.group.wait()

        let all = results.all
        #expect(all.count == 200)
        var successes: [String: Int] = [:]
        var failures = 0
        for (index, result) in all {
            switch result {
            case .success(let location):
                #expect(location.name == names[index])
                successes[location.name, default: 0] += 1
            case .failure(let error):
                #expect(error == RPCError(.alreadyExists, "location name \"\(names[index])\" already exists"))
                failures += 1
            }
        }
        #expect(failures == 30)
        #expect(successes.count == 170 && successes.values.allSatisfy { $0 == 1 })
        let stored = try db.read(Operations.listLocations, ListLocationsRequest()).locations.map(\.name)
        #expect(Set(stored) == Set(names) && stored.count == 170)
    }

    @Test(arguments: Backend.all)
    func aFailedWriteUndoesOnlyItsOwnChanges(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let error = rpcError {
            try db.write({ (_: Int, w: any StoreWriter) throws(RPCError) -> Int in
                _ = try Operations.createLocation(CreateLocationRequest(location: Location(name: "A", colorHex: "#000000")), w)
                throw RPCError(.aborted, "changed my mind")
            }, 0)
        }
        #expect(error == RPCError(.aborted, "changed my mind"))
        _ = try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: "B", colorHex: "#000000")))
        #expect(try db.read(Operations.listLocations, ListLocationsRequest()).locations.map(\.name) == ["B"])
    }

    /// One transaction holding writes that succeed, one that fails before changing anything
    /// (a taken name) and one that fails after changing rows: only the last forces the
    /// batch to run again with a savepoint per write; what each caller gets is what is stored.
    @Test(arguments: Backend.all)
    func aBatchWithAWriteFailingAfterItsChangesKeepsTheOthers(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = db.store
        _ = try db.write(Operations.createLocation, CreateLocationRequest(location: Location(name: "taken", colorHex: "#000000")))
        let results = Results<Location>()
        let plan = ["ok 1", "taken", "undone", "ok 2", "ok 3"]
        store.submitBatch {
            for (index, name) in plan.enumerated() {
                results.group.enter()
                store.write({ w throws(RPCError) in
                    let location = try Operations.createLocation(
                        CreateLocationRequest(location: Location(name: name, colorHex: "#000000")), w)
                    if name == "undone" { throw RPCError(.aborted, "changed my mind") }
                    return location
                }, completion: { results.record(index, $0) })
            }
        }
        #expect(results.group.wait(timeout: .now() + 120) == .success)
        let all = results.all
        #expect((try? all[1]?.get()) == nil && (try? all[2]?.get()) == nil)
        if case .failure(let error)? = all[2] { #expect(error.code == .aborted) }
        if case .failure(let error)? = all[1] { #expect(error.code == .alreadyExists) }
        let stored = try db.read(Operations.listLocations, ListLocationsRequest()).locations
        #expect(Set(stored.map(\.name)) == ["taken", "ok 1", "ok 2", "ok 3"])
        // The ids the callers got are the ones stored (a batch run again creates new ones).
        for index in [0, 3, 4] {
            let returned = try #require(try? all[index]?.get())
            #expect(stored.contains(returned), "\(returned.name) as returned is not what is stored")
        }
    }

    /// The writes of one commit are all answered before the one "delivered" call that
    /// lets the receiver wake its consumer; each read is followed by its own.
    @Test(arguments: Backend.all)
    func completionsAreFollowedByOneDeliveredCallPerGroup(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = db.store
        let events = LockedValue<[String]>([])
        func waitForEvents(_ count: Int) -> [String] {
            let deadline = ContinuousClock.now + .seconds(120)
            while events.withLock({ $0.count }) < count && ContinuousClock.now < deadline { usleep(1000) }
            usleep(20_000)  // and nothing more arrives
            return events.withLock { $0 }
        }
        store.setCompletionsDelivered { events.withLock { $0.append("delivered") } }

        // A write that holds the writer until the 20 others are queued: they then form one commit.
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writes = Results<Location>()
        writes.group.enter()
        store.write({ _ throws(RPCError) -> Location in
            started.signal()
            release.wait()
            throw RPCError(.aborted, "only holding the writer")
        }, completion: { result in
            events.withLock { $0.append("blocker") }
            writes.record(-1, result)
        })
        #expect(started.wait(timeout: .now() + 120) == .success)
        for index in 0..<20 {
            writes.group.enter()
            let request = CreateLocationRequest(location: Location(name: "room \(index)", colorHex: "#000000"))
            store.write({ w throws(RPCError) in try Operations.createLocation(request, w) }) { result in
                events.withLock { $0.append("write") }
                writes.record(index, result)
            }
        }
        release.signal()
        #expect(writes.group.wait(timeout: .now() + 120) == .success)
        #expect(waitForEvents(23) == ["blocker", "delivered"] + Array(repeating: "write", count: 20) + ["delivered"])

        events.withLock { $0.removeAll() }
        let reads = Results<ListLocationsResponse>()
        store.submitBatch {
            for index in 0..<5 {
                reads.group.enter()
                store.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) }) { result in
                    events.withLock { $0.append("read") }
                    reads.record(index, result)
                }
            }
        }
        #expect(reads.group.wait(timeout: .now() + 120) == .success)
        let readEvents = waitForEvents(10)
        // Readers may interleave, but every read is announced on its own.
        #expect(readEvents.filter { $0 == "read" }.count == 5 && readEvents.filter { $0 == "delivered" }.count == 5)
        #expect(readEvents.last == "delivered")
    }

    /// What waits behind a running write when the store closes is failed at once, never run:
    /// the write running finishes (and is kept), the 40 queued behind it are UNAVAILABLE and
    /// absent from the database. (Before, close ran every queued job first.)
    @Test func closeFailsWhatIsQueuedWithoutRunningIt() throws {
        let db = try TestDatabase(.sqlite)
        let store = db.store
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let first = Waiter<Location>()
        store.write({ w throws(RPCError) in
            started.signal()
            gate.wait()  // the writer thread is busy with this write until the test opens the gate
            return try Operations.createLocation(CreateLocationRequest(location: Location(name: "ran", colorHex: "#000000")), w)
        }, completion: first.finish)
        started.wait()
        let queued = Results<Location>()
        let ran = Atomic<Int>(0)
        for index in 0..<40 {
            queued.group.enter()
            store.write({ w throws(RPCError) in
                ran.add(1, ordering: .relaxed)
                return try Operations.createLocation(CreateLocationRequest(location: Location(name: "queued \(index)",
                                                                                              colorHex: "#000000")), w)
            }) { queued.record(index, $0) }
        }
        let closed = DispatchSemaphore(value: 0)
        Thread {
            store.close()  // blocks until the running write ends
            closed.signal()
        }.start()
        // The queued writes are failed before the running one is let go.
        queued.group.wait()
        #expect(queued.all.count == 40)
        #expect(queued.all.values.allSatisfy { result in rpcError { try result.get() } == RPCError(.unavailable, "the store is closed") })
        #expect(ran.load(ordering: .relaxed) == 0)
        gate.signal()
        #expect((try? first.wait().get())?.name == "ran")
        closed.wait()
        try db.reopen()
        let names = try db.read(Operations.listLocations, ListLocationsRequest(pageSize: 1000)).locations.map(\.name)
        #expect(names.contains("ran") && !names.contains { $0.hasPrefix("queued ") }, "\(names)")
    }

    /// Close ends what runs and fails what waits (so a stop does not run a long queue first): each
    /// job completes, either done or UNAVAILABLE without having run, and exactly the writes that
    /// succeeded are in the database afterwards.
    @Test(arguments: Backend.all)
    func closeFailsQueuedWorkThenRefusesMore(backend: Backend) throws {
        let db = try TestDatabase(backend)
        let store = db.store
        let writes = Results<Location>()
        for index in 0..<300 {
            writes.group.enter()
            let request = CreateLocationRequest(location: Location(name: "room \(index)", colorHex: "#000000"))
            store.write({ w throws(RPCError) in try Operations.createLocation(request, w) }) { writes.record(index, $0) }
        }
        let reads = Results<ListLocationsResponse>()
        for index in 0..<50 {
            reads.group.enter()
            store.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) }) {
                reads.record(index, $0)
            }
        }
        store.close()
        writes.group.wait()
        reads.group.wait()
        let closed = RPCError(.unavailable, "the store is closed")
        #expect(writes.all.count == 300 && reads.all.count == 50)
        #expect(writes.all.values.allSatisfy { result in (try? result.get()) != nil || rpcError { try result.get() } == closed })
        #expect(reads.all.values.allSatisfy { result in (try? result.get()) != nil || rpcError { try result.get() } == closed })
        let written = Set(writes.all.compactMap { index, result in (try? result.get()).map { _ in "room \(index)" } })

        let late = Waiter<ListLocationsResponse>()
        store.read({ r throws(RPCError) in try Operations.listLocations(ListLocationsRequest(), r) },
                   completion: late.finish)
        #expect(rpcError { try late.wait().get() } == RPCError(.unavailable, "the store is closed"))
        store.close()  // idempotent

        try db.reopen()
        let stored = try db.read(Operations.listLocations, ListLocationsRequest(pageSize: 1000)).locations
            .filter { $0.name.hasPrefix("room ") }
        #expect(Set(stored.map(\.name)) == written && stored.count == written.count)
    }

    @Test(arguments: Backend.all)
    func readsSeeWritesThatCompletedBeforeThem(backend: Backend) throws {
        let db = try TestDatabase(backend)
        for index in 0..<50 {
            let created = try db.write(Operations.createMealRecord, CreateMealRecordRequest(
                mealRecord: MealRecord(name: "m\(index)", calories: 1, category: .snack)))
            #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: created.id)) == created)
        }
    }
}
