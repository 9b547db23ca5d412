import CSQLite
import LarderSystem
import LarderWire
import Synchronization

/// Moves the WAL back into the database file on a thread and connection of
/// its own, so the writer never waits for a checkpoint's writes and fsyncs.
///
/// Installed as the writer's WAL hook (which replaces SQLite's automatic
/// checkpoint); `CheckpointPolicy` decides after each commit whether to wake
/// this thread for PASSIVE checkpoints or to have the writer checkpoint.
/// When no commit came for `idleMilliseconds`, the thread also copies what is
/// left (a WAL below the policy's threshold would otherwise stay uncopied while
/// the server only reads, and every page read would look it up in the WAL).
final class SQLiteCheckpointer: @unchecked Sendable {
    // Sendable because: `pending` and `stopped` are guarded by `condition`; `policy` is
    // touched only by the writer's commit hook (one thread); `connection` only by this
    // object's own thread, until stop() has joined it.
    private let connection: SQLiteConnection
    private let pages: Int32
    private let condition = ThreadCondition()
    private var pending = false
    /// When to checkpoint; only the writer's commit hook touches it.
    private var policy: CheckpointPolicy
    /// Frames the last background pass left copied (0: none since the WAL restarted).
    private let copiedFrames = Atomic<Int32>(0)
    private var stopped = false
    /// Commits reported by the writer's hook.
    private let commits = Atomic<UInt64>(0)
    /// How long without a commit before an idle checkpoint; 0: none.
    private let idleNanoseconds: UInt64
    /// How long the thread sleeps at most: `idleNanoseconds`, or 250 ms with a file watch and no
    /// idle checkpoints (the watch needs its looks); 0: until signalled.
    private let wakeNanoseconds: UInt64
    /// Started last in `init` (its closure needs `self`), joined by `stop()`.
    private var thread: SystemThread?

    /// `busyWait` is the store's: the connection waits for another process's lock as the
    /// store's own do, and gives up as soon as the store closes.
    /// Looked at on every wake of the thread (at least every `idleMilliseconds`), so that an
    /// idle server notices its database file moving too (health NOT_SERVING), not only at its
    /// next write.
    private let fileWatch: DatabaseFileWatch?

    init(path: String, pages: Int32, idleMilliseconds: Int = 0, busyWait: SQLiteBusyWait,
         fileWatch: DatabaseFileWatch? = nil) throws(SQLiteError) {
        self.fileWatch = fileWatch
        connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
        try connection.waitWhenBusy(busyWait)
        // A connection learns that the database is in WAL mode only when it first
        // reads it; until then sqlite3_wal_checkpoint_v2 returns OK and does nothing.
        try connection.execute("PRAGMA journal_mode=WAL")
        self.pages = max(1, pages)
        idleNanoseconds = UInt64(max(0, idleMilliseconds)) * 1_000_000
        wakeNanoseconds = idleNanoseconds > 0 ? idleNanoseconds : (fileWatch == nil ? 0 : 250_000_000)
        policy = CheckpointPolicy(pages: pages)
        thread = SystemThread(name: "larder-checkpoint") { [self] in run() }
    }

    /// Makes `writer` report its commits to this checkpointer. The checkpointer
    /// must outlive the writer connection. The hook must return SQLITE_OK: SQLite runs it
    /// after the commit is durable and turns anything else into an error of the COMMIT,
    /// which would answer a committed write as failed.
    func install(on writer: SQLiteConnection) throws(SQLiteError) {
        let db = try writer.database()
        sqlite3_wal_hook(db, { context, db, _, walPages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.committed(walPages: walPages, db: db)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Runs on the writer after every commit that leaves `walPages` in the WAL.
    private func committed(walPages: Int32, db: OpaquePointer?) {
        commits.add(1, ordering: .relaxed)
        if walPages < policy.pages { copiedFrames.store(0, ordering: .releasing) }
        switch policy.afterCommit(walPages: walPages, copied: copiedFrames.load(ordering: .acquiring)) {
        case .nothing:
            return
        case .writerCheckpoint:
            sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            copiedFrames.store(0, ordering: .releasing)
        case .wakeBackground:
            condition.lock()
            pending = true
            condition.signal()
            condition.unlock()
        }
    }

    /// Most PASSIVE checkpoints run back to back per signal.
    static let catchUpPasses = 4

    /// Copies the WAL into the database, then what the writer appended meanwhile,
    /// until the remainder is small enough for the writer to finish (or a pass
    /// finds nothing new, or the writer outruns it).
    private func catchUp(_ db: OpaquePointer) {
        var previous: Int32 = -1
        for _ in 0..<Self.catchUpPasses {
            var logFrames: Int32 = 0
            var copied: Int32 = 0
            guard sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied) == SQLITE_OK
            else { return }
            copiedFrames.store(copied, ordering: .releasing)
            if copied <= previous || logFrames - copied >= pages { return }
            previous = copied
        }
    }

    /// Stops the thread and closes its connection. Call once, after the writer closed.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        thread?.join()
    }

    private func run() {
        // The commit count at the last look, and when the WAL was last seen all copied
        // (.max: not yet; a WAL left by an earlier run is copied once the store is idle).
        var seenCommits: UInt64 = 0
        var copiedAtCommits = UInt64.max
        var lostWALCopiedAtCommits: UInt64?
        while true {
            condition.lock()
            var timedOut = false
            while !pending && !stopped && !timedOut {
                if wakeNanoseconds > 0 { timedOut = !condition.wait(nanoseconds: wakeNanoseconds) } else { condition.wait() }
            }
            let stop = stopped
            let signalled = pending
            pending = false
            condition.unlock()
            if stop { break }
            if let fileWatch { _ = fileWatch.check(connection) }
            // Best effort: a busy or failed checkpoint is retried after the next signal or idle spell.
            guard let db = try? connection.database() else { continue }
            if let fileWatch, fileWatch.walLost {
                // Deleted under the store: what it holds is copied while the connections can still
                // read it. Writes are refused from now on, but one that passed the check before
                // may still commit: copied again at each wake that finds more commits.
                let now = commits.load(ordering: .acquiring)
                if now != lostWALCopiedAtCommits && copyAll(db) {
                    if lostWALCopiedAtCommits == nil { fileWatch.lostWALCopied() }
                    lostWALCopiedAtCommits = now
                }
            } else if signalled {
                catchUp(db)
            } else if idleNanoseconds > 0 {
                let now = commits.load(ordering: .relaxed)
                if now == seenCommits && now != copiedAtCommits && copyAll(db) { copiedAtCommits = now }
                seenCommits = now
            }
        }
        connection.close()
    }

    /// One PASSIVE checkpoint; true when it left nothing of the WAL uncopied.
    private func copyAll(_ db: OpaquePointer) -> Bool {
        var logFrames: Int32 = 0
        var copied: Int32 = 0
        guard sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied) == SQLITE_OK
        else { return false }
        copiedFrames.store(copied, ordering: .releasing)
        return copied >= logFrames
    }
}
