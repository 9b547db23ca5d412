import CSQLite
import Dispatch
import Foundation
import LarderAPI
@testable import LarderSQLite
import LarderStore
import LarderWire
import Synchronization
import Testing
import LarderTestSupport

/// The SQLite backend finds meal records by id through an in-memory index of their
/// primary keys: it follows commits, savepoints and rollbacks, readers on either side
/// of a commit find what they should, it is rebuilt on open, and a second server on the
/// same file is refused.
@Suite(.offThePool) struct MealKeyIndexTests {
    static let idA = "0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2f"
    static let idB = "a1b2c3d4-e5f6-4789-8abc-def012345678"

    // MARK: The index on its own

    @Test func aKeyIsTheUUIDsBitsInEitherCase() throws {
        let lower = try #require(MealKey(id: Self.idA))
        #expect(MealKey(id: Self.idA.uppercased()) == lower)
        #expect(lower.high == 0x0f8e_6d2c_3b1a_4c5d && lower.low == 0x9e8f_7a6b_5c4d_3e2f)
        #expect(MealKey(id: Self.idB) != lower)
        #expect(lower.description == Self.idA && MealKey(id: Self.idB)?.description == Self.idB)
        for bad in ["", "nope", String(Self.idA.dropLast()), Self.idA + "0",
                    Self.idA.replacingOccurrences(of: "-", with: "_"), "0f8e6d2c-3b1a-4c5d-9e8f-7a6b5c4d3e2g",
                    "0f8e6d2c3b1a-4c5d-9e8f-7a6b5c4d3e2f-"] {
            #expect(MealKey(id: bad) == nil, "\(bad)")
        }
    }

    @Test func stagedChangesAreTheWritersUntilPublished() throws {
        let index = MealKeyIndex()
        let a = try #require(MealKey(id: Self.idA))
        #expect(index.load([(a, t(10))]) == nil)
        #expect(index.load([(a, t(11))]) == a, "a second row with the same id is reported")
        var transaction = MealKeyTransaction(index: index)
        transaction.stage(a, .at(t(20)))
        #expect(index.writerView(a) == t(20))
        #expect(index.entry(a) == .init(committed: t(11), staged: .at(t(20))), "readers see both places")
        transaction.committed()
        #expect(index.entry(a) == .init(committed: t(20), staged: nil))
        transaction.stage(a, .deleted)
        #expect(index.writerView(a) == nil)
        transaction.committed()
        #expect(index.entry(a).isEmpty && index.count == 0)
    }

    @Test func aSavepointRollbackUndoesOnlyTheChangesAfterIt() throws {
        let index = MealKeyIndex()
        let a = try #require(MealKey(id: Self.idA))
        let b = try #require(MealKey(id: Self.idB))
        _ = index.load([(a, t(1))])
        var transaction = MealKeyTransaction(index: index)
        transaction.savepoint()
        transaction.stage(a, .at(t(2)))
        transaction.releaseSavepoint()
        transaction.savepoint()
        transaction.stage(b, .at(t(3)))
        transaction.stage(a, .deleted)
        transaction.rollbackToSavepoint()
        #expect(index.writerView(a) == t(2) && index.writerView(b) == nil)
        #expect(index.entry(b).isEmpty)
        transaction.committed()
        #expect(index.entry(a) == .init(committed: t(2), staged: nil) && index.count == 1)
    }

    @Test func aRollbackRestoresTheCommittedState() throws {
        let index = MealKeyIndex()
        let a = try #require(MealKey(id: Self.idA))
        let b = try #require(MealKey(id: Self.idB))
        _ = index.load([(a, t(1))])
        var transaction = MealKeyTransaction(index: index)
        transaction.stage(a, .deleted)
        transaction.stage(b, .at(t(5)))
        transaction.stage(b, .at(t(6)))
        transaction.rollback()
        #expect(index.entry(a) == .init(committed: t(1), staged: nil))
        #expect(index.entry(b).isEmpty)
        transaction.committed()
        #expect(index.count == 1 && index.writerView(a) == t(1))
    }

    // MARK: Through the store

    static func meal(_ name: String, id: String = "", at seconds: Int64) -> CreateMealRecordRequest {
        CreateMealRecordRequest(mealRecord: MealRecord(id: id, name: name, calories: 100, category: .lunch,
                                                       eatenAt: Timestamp(seconds: seconds)))
    }

    @Test func aWriteThatFailsLeavesNoRecordToFind() throws {
        let db = try TestDatabase()
        let error = rpcError {
            try db.write({ (_: Int, w: any StoreWriter) throws(RPCError) -> Int in
                _ = try Operations.createMealRecord(Self.meal("undone", id: Self.idA, at: 1_800_000_000), w)
                throw RPCError(.aborted, "changed my mind")
            }, 0)
        }
        #expect(error?.code == .aborted)
        #expect(rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: Self.idA)) }?.code
            == .notFound)
        let created = try db.write(Operations.createMealRecord, Self.meal("kept", id: Self.idA, at: 1_800_000_001))
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: Self.idA)) == created)
        #expect(rpcError { try db.write(Operations.createMealRecord, Self.meal("again", id: Self.idA, at: 5)) }
            == RPCError(.alreadyExists, "meal record id \"\(Self.idA)\" already exists"))
    }

    /// A batch run again with savepoints (one write failed after changing rows): the
    /// undone write's record is not findable, the others are, at their new places.
    @Test func aBatchRunAgainKeepsTheIndexInStepWithTheTable() throws {
        let db = try TestDatabase()
        let existing = try db.write(Operations.createMealRecord, Self.meal("moved", at: 1_800_000_000))
        let ids = [Self.idA, Self.idB, "11111111-2222-4333-8444-555555555555"]
        let results = GroupCommitTests.Results<MealRecord>()
        db.store.submitBatch {
            for (index, id) in ids.enumerated() {
                results.group.enter()
                db.store.write({ w throws(RPCError) in
                    let record = try Operations.createMealRecord(Self.meal("meal \(index)", id: id, at: 1_800_000_100), w).message
                    if index == 1 {
                        // Moves another record, then fails: both changes are undone.
                        var moved = existing
                        moved.eatenAt = Timestamp(seconds: 1_700_000_000)
                        _ = try Operations.updateMealRecord(UpdateMealRecordRequest(mealRecord: moved,
                                                                                    updateMask: ["eaten_at"]), w)
                        throw RPCError(.aborted, "changed my mind")
                    }
                    return record
                }, completion: { results.record(index, $0) })
            }
        }
        #expect(results.group.wait(timeout: .now() + 120) == .success)
        for (index, id) in ids.enumerated() {
            let found = rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: id)) }
            #expect(found?.code == (index == 1 ? .notFound : nil), "\(id)")
        }
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: existing.id)) == existing)
        var moved = existing
        moved.eatenAt = Timestamp(seconds: 1_700_000_000)
        let updated = try db.write(Operations.updateMealRecord,
                                   UpdateMealRecordRequest(mealRecord: moved, updateMask: ["eaten_at"]))
        #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: existing.id)) == updated)
    }

    /// Reads racing a writer that keeps moving one record (its eaten_at is half of the
    /// primary key) and creating and deleting others: the moving record is always found.
    @Test func readsFindARecordThatKeepsMoving() throws {
        let db = try TestDatabase()
        let store = db.store
        let record = try db.write(Operations.createMealRecord, Self.meal("moving", at: 1_800_000_000))
        let stop = Atomic<Bool>(false)
        let writes = DispatchGroup()
        writes.enter()
        DispatchQueue.global().async {
            defer { writes.leave() }
            for round in 0..<400 where !stop.load(ordering: .relaxed) {
                var move = record
                move.eatenAt = Timestamp(seconds: 1_800_000_000 + Int64(round % 7) * 60)
                let moved = move
                let done = DispatchGroup()
                done.enter()
                store.submitBatch {
                    store.write({ w throws(RPCError) in
                        try Operations.updateMealRecord(UpdateMealRecordRequest(mealRecord: moved,
                                                                                updateMask: ["eaten_at"]), w)
                    }, completion: { _ in done.leave() })
                    store.write({ w throws(RPCError) in
                        let other = try Operations.createMealRecord(Self.meal("other", at: 1_800_000_000), w).message
                        return try Operations.deleteMealRecord(DeleteMealRecordRequest(id: other.id), w)
                    }, completion: { _ in })
                }
                done.wait()
            }
        }
        let results = GroupCommitTests.Results<MealRecord>()
        for index in 0..<3000 {
            results.group.enter()
            store.read({ r throws(RPCError) in try Operations.getMealRecord(GetMealRecordRequest(id: record.id), r) },
                       completion: { results.record(index, $0) })
            if index % 50 == 49 { _ = results.group.wait(timeout: .now() + 120) }
        }
        #expect(results.group.wait(timeout: .now() + 120) == .success)
        stop.store(true, ordering: .relaxed)
        writes.wait()
        let failures = results.all.values.compactMap { result -> RPCError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(results.all.values.allSatisfy { (try? $0.get())?.id == record.id })
    }

    @Test func theIndexIsRebuiltWhenTheStoreOpens() throws {
        let db = try TestDatabase()
        var kept: [MealRecord] = []
        var deleted: [String] = []
        for index in 0..<60 {
            let record = try db.write(Operations.createMealRecord, Self.meal("meal \(index)", at: 1_800_000_000 + Int64(index)))
            switch index % 3 {
            case 0:
                _ = try db.write(Operations.deleteMealRecord, DeleteMealRecordRequest(id: record.id))
                deleted.append(record.id)
            case 1:
                var moved = record
                moved.eatenAt = Timestamp(seconds: 1_600_000_000 - Int64(index))
                kept.append(try db.write(Operations.updateMealRecord,
                                         UpdateMealRecordRequest(mealRecord: moved, updateMask: ["eaten_at"])))
            default:
                kept.append(record)
            }
        }
        try db.reopen(seed: false)
        for record in kept {
            #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: record.id)) == record)
        }
        for id in deleted {
            #expect(rpcError { try db.read(Operations.getMealRecord, GetMealRecordRequest(id: id)) }?.code == .notFound)
        }
    }

    @Test func aSecondStoreOnTheSameFileIsRefusedUntilTheFirstCloses() throws {
        let db = try TestDatabase()
        for readOnly in [false, true] {
            let error = rpcError { try SQLiteStore.open(path: db.path, options: .init(readOnly: readOnly)) }
            #expect(error == RPCError(.failedPrecondition,
                                      "database \"\(db.path)\" is in use by another larder-server; stop it or use another file"))
        }
        _ = try db.write(Operations.createMealRecord, Self.meal("still served", at: 1_800_000_000))
        db.store.close()
        let first = try SQLiteStore.openAfterClose(path: db.path, options: .init(readOnly: true))
        let second = try SQLiteStore.openAfterClose(path: db.path, options: .init(readOnly: true))
        #expect(rpcError { try SQLiteStore.open(path: db.path, options: .init()) }?.code == .failedPrecondition)
        first.close()
        second.close()
        try db.reopen(seed: false)
    }

    /// Rows the API cannot write (an id stored twice, an id that is no UUID) stop the open
    /// with DATA_LOSS naming the id, instead of serving an index that disagrees with the table.
    @Test func aTableTheIndexCannotDescribeIsRefused() throws {
        for (bad, message) in [(Self.idA, "meal record id \"\(Self.idA)\" is stored twice"),
                               ("not-a-uuid", "meal record id \"not-a-uuid\" is not a UUID")] {
            let db = try TestDatabase()
            _ = try db.write(Operations.createMealRecord, Self.meal("first", id: Self.idA, at: 1_800_000_000))
            try db.closeAndExecute("INSERT INTO meal_records VALUES ('\(bad)', 'x', 1, 1, 5, 0, 0, 0, NULL)")
            let error = rpcError { try SQLiteStore.openAfterClose(path: db.path, options: .init()) }
            #expect(error?.code == .dataLoss)
            #expect(error?.message.contains(message) == true, "\(String(describing: error))")
            try db.closeAndExecute("DELETE FROM meal_records WHERE eaten_at_ms = 5")
            try db.reopen(seed: false)
            #expect(try db.read(Operations.getMealRecord, GetMealRecordRequest(id: Self.idA)).name == "first")
        }
    }

    /// A version-4 file (descending keys, a unique index on the ids) moves to version 5
    /// with its records, which are then found by id and listed newest first.
    @Test func aVersionFourDatabaseKeepsItsRecords() throws {
        let db = try TestDatabase()
        db.store.close()
        let path = db.directory.appendingPathComponent("v4.sqlite").path
        let ids = [Self.idA, Self.idB, "11111111-2222-4333-8444-555555555555"]
        do {
            let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            for migration in SQLiteSchema.migrations[0..<4] { try connection.execute(migration) }
            for (index, id) in ids.enumerated() {
                try connection.execute("""
                    INSERT INTO meal_records VALUES ('\(id)', 'meal \(index)', \(index), 2, \(index * 1000), 0, 0, NULL)
                    """)
            }
            try connection.execute("PRAGMA user_version=4")
        }
        let store = try SQLiteStore.openAfterClose(path: path, options: .init(seed: false))
        defer { store.close() }
        for (index, id) in ids.enumerated() {
            let waiter = Waiter<MealRecord>()
            store.read({ r throws(RPCError) in try Operations.getMealRecord(GetMealRecordRequest(id: id), r) },
                       completion: waiter.finish)
            let record = try waiter.wait().get()
            #expect(record.name == "meal \(index)" && record.eatenAt == Timestamp(unixMilliseconds: Int64(index * 1000)))
        }
        let page = Waiter<ListMealRecordsResponse>()
        store.read({ r throws(RPCError) in try Operations.listMealRecords(ListMealRecordsRequest(), r).decoded() },
                   completion: page.finish)
        #expect(try page.wait().get().mealRecords.map(\.id) == ids.reversed())
    }
}

/// The index's place for a record at `milliseconds` (no nanoseconds).
private func t(_ milliseconds: Int64, _ nanos: Int32 = 0) -> StoreInstant {
    StoreInstant(milliseconds: milliseconds, nanos: nanos)
}
