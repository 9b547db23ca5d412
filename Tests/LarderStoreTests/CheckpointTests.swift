import Foundation
import LarderAPI
@testable import LarderSQLite
import LarderStore
import LarderWire
import Testing

/// The background checkpointer moves the WAL into the database file while the server runs.
@Suite struct CheckpointTests {
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// 200 commits of a few pages each stay under the writer's own fallback (16 × 100 WAL pages),
    /// so only the background thread can have moved them into the database file.
    @Test func theWALIsCheckpointedInTheBackground() throws {
        let db = try TestDatabase()
        db.store.close()
        let store = try SQLiteStore.open(path: db.path, options: .init(durability: .normal, checkpointPages: 100))
        defer { store.close() }
        let before = Self.size(db.path)
        for index in 0..<200 {
            let waiter = Waiter<MealRecord>()
            store.write({ w throws(RPCError) in
                try Operations.createMealRecord(CreateMealRecordRequest(mealRecord: MealRecord(
                    name: "meal \(index) " + String(repeating: "x", count: 80), calories: 100, category: .lunch)), w)
            }, completion: waiter.finish)
            _ = try waiter.wait().get()
        }
        // The checkpoint runs on its own thread after a commit; give it a moment (bounded).
        var after = Self.size(db.path)
        for _ in 0..<100 where after <= before + 16 * 1024 {
            usleep(20_000)
            after = Self.size(db.path)
        }
        #expect(after > before + 16 * 1024, "database file grew from \(before) to \(after) bytes while open")
    }
}
