import CSQLite
@testable import LarderSQLite
import LarderStore
import LarderWire
import Testing

/// What a failed COMMIT answers on SQLite: UNKNOWN wherever the transaction's frames may be
/// in the WAL for the next start's recovery to apply, "not applied" statuses only where they
/// cannot be (audit 30 F1).
@Suite struct CommitFailureTests {
    static let sharedMemorySize = SQLITE_IOERR | (19 << 8)
    static let sharedMemoryMap = SQLITE_IOERR | (21 << 8)
    static let fsync = SQLITE_IOERR | (4 << 8)
    static let write = SQLITE_IOERR | (3 << 8)

    /// The disk filled while the WAL index (`-shm`) grew, after the frames were written: the
    /// error reads as a full disk (SQLITE_FULL), but the write came back after a restart.
    @Test func aWALIndexThatCannotGrowLeavesTheOutcomeUnknown() {
        let full = SQLiteError(code: SQLITE_FULL, returnedCode: Self.sharedMemorySize,
                               message: "disk I/O error (no space left on the file system holding /db)", sql: "COMMIT")
        #expect(full.rpcError.code == .resourceExhausted, "elsewhere a full disk stays RESOURCE_EXHAUSTED")
        let error = SQLiteSession.commitFailure(full)
        #expect(error.code == .unknown)
        #expect(error.message.hasPrefix("the commit failed where it may already be in the write-ahead log, so this "
                                        + "write may or may not have been applied: it is not seen now, but if the server "
                                        + "stops before another write commits, its next start applies it; read it back "
                                        + "before repeating it: disk I/O error (no space"),
                "\(error.message)")
        #expect(SQLiteSession.commitFailure(SQLiteError(code: Self.sharedMemoryMap, message: "x")).code == .unknown)
        #expect(SQLiteSession.commitFailure(SQLiteError(code: SQLITE_NOMEM, message: "x")).code == .unknown)
    }

    @Test func aFailedSyncLeavesTheOutcomeUnknown() {
        let error = SQLiteSession.commitFailure(SQLiteError(code: Self.fsync, message: "disk I/O error"))
        #expect(error.code == .unknown)
        #expect(error.message.hasPrefix("syncing the commit to disk failed, so this write may or may not have been applied"))
    }

    /// A frame that could not be written leaves no valid commit frame: not applied.
    @Test func aFailedFrameWriteIsNotApplied() {
        let full = SQLiteError(code: SQLITE_FULL, returnedCode: Self.write, message: "disk I/O error (no space left)")
        #expect(SQLiteSession.commitFailure(full).code == .resourceExhausted)
        #expect(SQLiteSession.commitFailure(SQLiteError(code: SQLITE_FULL, message: "database or disk is full")).code
                == .resourceExhausted)
        #expect(SQLiteSession.commitFailure(SQLiteError(code: SQLITE_BUSY, message: "database is locked")).code
                == .unavailable)
    }
}
