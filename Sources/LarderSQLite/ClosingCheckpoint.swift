#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import LarderSystem

/// What the writer does as the store closes: copies the whole WAL into the database file and
/// empties it (`SQLITE_CHECKPOINT_TRUNCATE`), so that the database file alone holds every
/// acknowledged write (what OPERATIONS.md's "stop the server, copy the file" relies on).
///
/// Another process reading the database (a `sqlite3` shell in a transaction, a backup) holds
/// the copy back, and a full disk stops it: it is tried again for up to `milliseconds`, and if
/// frames are still left, `report` is told so, naming the WAL to keep with the database.
struct ClosingCheckpoint: Sendable {
    let walPath: String
    let milliseconds: Int
    let report: @Sendable (String) -> Void

    func run(on db: OpaquePointer) {
        let deadline = MonotonicClock.nanoseconds() &+ UInt64(max(0, milliseconds)) * 1_000_000
        while true {
            var logFrames: Int32 = 0
            var copied: Int32 = 0
            let result = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &copied)
            if result == SQLITE_OK { return }
            let retry = result & 0xFF == SQLITE_BUSY || result & 0xFF == SQLITE_LOCKED
            // Every frame copied, only the emptying of the WAL held back: the file holds it all.
            if retry && logFrames >= 0 && copied >= logFrames { return }
            if !retry || MonotonicClock.nanoseconds() >= deadline {
                let why = retry ? "another process holds a read transaction on the database"
                    : String(cString: sqlite3_errmsg(db))
                let left = logFrames > 0 ? "\(max(0, logFrames - copied)) of its \(logFrames) frames" : "frames"
                report("the WAL could not be copied into the database file at stop (\(why)): \(left) stay in "
                       + "\(walPath), with acknowledged writes the database file alone lacks; keep that file beside "
                       + "the database (copy both, or use VACUUM INTO), and the next start copies it")
                return
            }
            usleep(50_000)
        }
    }
}
