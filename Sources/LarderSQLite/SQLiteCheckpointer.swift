import CSQLite
import Foundation
import LarderWire

/// Moves the WAL back into the database file on a thread and connection of
/// its own, so the writer never waits for a checkpoint's writes and fsyncs.
///
/// Installed as the writer's WAL hook (which replaces SQLite's automatic
/// checkpoint): after a commit leaves `pages` or more in the WAL, the
/// checkpointer runs a PASSIVE checkpoint. Should it fall far behind, the
/// writer checkpoints itself (backpressure).
final class SQLiteCheckpointer: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let pages: Int32
    private let condition = NSCondition()
    private var pending = false
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)
    /// WAL pages (as multiples of `pages`) past which the writer checkpoints itself.
    /// Under a steady write load the background checkpoint never quite catches up, so
    /// the WAL only restarts from its beginning after such a writer checkpoint: this
    /// bounds the WAL at about 4 × `pages` pages.
    static let writerFallbackFactor: Int64 = 4

    init(path: String, pages: Int32) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
        try connection.execute("PRAGMA busy_timeout=5000")
        // A connection learns that the database is in WAL mode only when it first
        // reads it; until then sqlite3_wal_checkpoint_v2 returns OK and does nothing.
        try connection.execute("PRAGMA journal_mode=WAL")
        self.pages = max(1, pages)
        let thread = Thread { [self] in run() }
        thread.name = "larder-checkpoint"
        thread.start()
    }

    /// Makes `writer` report its commits to this checkpointer. The checkpointer
    /// must outlive the writer connection.
    func install(on writer: SQLiteConnection) throws(SQLiteError) {
        let db = try writer.database()
        sqlite3_wal_hook(db, { context, db, _, walPages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.committed(walPages: walPages, db: db)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func committed(walPages: Int32, db: OpaquePointer?) {
        guard walPages >= pages else { return }
        if Int64(walPages) >= Int64(pages) * Self.writerFallbackFactor {
            // Far behind: the writer pays for one checkpoint itself.
            sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return
        }
        condition.lock()
        pending = true
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread and closes its connection. Call once, after the writer closed.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        finished.wait()
    }

    private func run() {
        while true {
            condition.lock()
            while !pending && !stopped { condition.wait() }
            let stop = stopped
            pending = false
            condition.unlock()
            if stop { break }
            // Best effort: a busy or failed checkpoint is retried after the next commit.
            if let db = try? connection.database() {
                sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
        }
        connection.close()
        finished.signal()
    }
}
