import Foundation
import LarderAPI
@testable import LarderSQLite
import LarderStore
import LarderWire
import Testing
import LarderTestSupport

/// The background checkpointer moves the WAL into the database file while the server runs.
@Suite(.offThePool) struct CheckpointTests {
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Commits `count` meal records one at a time (a few WAL pages each).
    static func writeMeals(_ count: Int, to store: SQLiteStore) throws {
        for index in 0..<count {
            let waiter = Waiter<MealRecord>()
            store.write({ w throws(RPCError) in
                try Operations.createMealRecord(CreateMealRecordRequest(mealRecord: MealRecord(
                    name: "meal \(index) " + String(repeating: "x", count: 80), calories: 100, category: .lunch)), w).message
            }, completion: waiter.finish)
            _ = try waiter.wait().get()
        }
    }

    /// The size of the file at `path` once it grew past `bytes`, or after `tries` looks 20 ms apart.
    static func size(_ path: String, onceOver bytes: Int, tries: Int) -> Int {
        var size = Self.size(path)
        for _ in 0..<tries where size <= bytes {
            usleep(20_000)
            size = Self.size(path)
        }
        return size
    }

    /// The database file grows while the server runs: the WAL is moved into it (by the
    /// background thread, and the writer finishing what it left). No idle checkpoints here:
    /// this is the policy's doing.
    @Test func theWALIsCheckpointedInTheBackground() throws {
        let db = try TestDatabase()
        db.store.close()
        let store = try SQLiteStore.openAfterClose(path: db.path, options: .init(durability: .normal, checkpointPages: 100,
                                                                      idleCheckpointMilliseconds: 0))
        defer { store.close() }
        let before = Self.size(db.path)
        try Self.writeMeals(200, to: store)
        // The checkpoint runs on its own thread after a commit; give it a moment (bounded).
        let after = Self.size(db.path, onceOver: before + 16 * 1024, tries: 3000)
        #expect(after > before + 16 * 1024, "database file grew from \(before) to \(after) bytes while open")
    }

    /// A WAL far below the policy's threshold is still copied into the database once no
    /// commit came for `idleCheckpointMilliseconds`; with idle checkpoints off it stays.
    @Test func anIdleStoreCopiesTheWALIntoTheDatabase() throws {
        for idle in [50, 0] {
            let db = try TestDatabase()
            db.store.close()
            let store = try SQLiteStore.openAfterClose(path: db.path, options: .init(durability: .normal,
                                                                          idleCheckpointMilliseconds: idle))
            defer { store.close() }
            let before = Self.size(db.path)
            try Self.writeMeals(100, to: store)
            // Bounded: 60 s for the idle checkpoint; with none, 0.6 s to show nothing copies it.
            let after = Self.size(db.path, onceOver: before + 16 * 1024, tries: idle > 0 ? 3000 : 30)
            if idle > 0 {
                #expect(after > before + 16 * 1024, "database file grew from \(before) to \(after) bytes")
            } else {
                #expect(after <= before + 16 * 1024, "without idle checkpoints the WAL was copied (\(before) → \(after))")
            }
        }
    }

    /// One-write commits (a few WAL pages each) wake the background once per `pages`
    /// new pages, not after every commit: each checkpoint fsyncs the database.
    @Test func smallCommitsWakeTheBackgroundOncePerPagesNotPerCommit() {
        var policy = CheckpointPolicy(pages: 100)
        var wakes: [Int32] = []
        for wal in stride(from: Int32(3), to: 390, by: 3) {
            let action = policy.afterCommit(walPages: wal, copied: 0)
            if action == .wakeBackground { wakes.append(wal) }
            #expect(action != .writerCheckpoint, "writer checkpoint at \(wal) pages")
        }
        #expect(wakes == [102, 204, 306])
    }

    @Test func theWriterFinishesWhatTheBackgroundNearlyCopiedThenTheWALRestarts() {
        var policy = CheckpointPolicy(pages: 100)
        #expect(policy.afterCommit(walPages: 120, copied: 0) == .wakeBackground)
        // The background copied 90 of 130: 40 left, more than a finishing share (12).
        #expect(policy.afterCommit(walPages: 130, copied: 90) == .nothing)
        #expect(policy.afterCommit(walPages: 140, copied: 130) == .writerCheckpoint)
        // The writer's checkpoint let the WAL restart from its beginning.
        #expect(policy.afterCommit(walPages: 5, copied: 0) == .nothing)
        #expect(policy.afterCommit(walPages: 101, copied: 0) == .wakeBackground)
    }

    @Test func aWriterOutrunningTheBackgroundCheckpointsItselfAtFourTimesPages() {
        var policy = CheckpointPolicy(pages: 100)
        #expect(policy.afterCommit(walPages: 100, copied: 0) == .wakeBackground)
        #expect(policy.afterCommit(walPages: 399, copied: 150) == .wakeBackground)
        #expect(policy.afterCommit(walPages: 400, copied: 150) == .writerCheckpoint)
        // A copy count from before a restart is not mistaken for this WAL's.
        #expect(policy.afterCommit(walPages: 3, copied: 0) == .nothing)
        #expect(policy.afterCommit(walPages: 110, copied: 390) == .wakeBackground)
    }
}
