#if canImport(Glibc)
import Glibc
#endif
import CSQLite
public import LarderStore
import LarderWire

/// A failed SQLite call: the extended result code, SQLite's message, and the SQL when known.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code, e.g. 2067 (SQLITE_CONSTRAINT_UNIQUE); SQLITE_FULL for a write
    /// that failed for want of room (see `init(in:code:message:sql:)`).
    public var code: Int32
    /// The extended result code as SQLite returned it, before that mapping to SQLITE_FULL.
    public var returnedCode: Int32
    public var message: String
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.init(code: code, returnedCode: code, message: message, sql: sql)
    }

    init(code: Int32, returnedCode: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.returnedCode = returnedCode
        self.message = message
        self.sql = sql
    }

    /// Extended codes Swift cannot import (they are macros built from expressions).
    public static let constraintCheck: Int32 = SQLITE_CONSTRAINT | (1 << 8)
    public static let constraintForeignKey: Int32 = SQLITE_CONSTRAINT | (3 << 8)
    public static let constraintNotNull: Int32 = SQLITE_CONSTRAINT | (5 << 8)
    public static let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)
    public static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)

    /// A failure to sync the WAL to disk (fsync of the file, or of its directory).
    public static let ioErrorFsync: Int32 = SQLITE_IOERR | (4 << 8)
    public static let ioErrorDirectoryFsync: Int32 = SQLITE_IOERR | (5 << 8)
    /// A failure to grow or map the WAL index (the `-shm` file): at a commit, SQLite meets it
    /// after writing (and syncing) the transaction's frames to the WAL.
    public static let ioErrorSharedMemorySize: Int32 = SQLITE_IOERR | (19 << 8)
    public static let ioErrorSharedMemoryMap: Int32 = SQLITE_IOERR | (21 << 8)

    /// Failures of a COMMIT that may come after its frames, commit frame included, reached
    /// the WAL: the live connection rolls back, but the recovery at the next start finds the
    /// frames and applies the transaction (audit 30 F1: a write answered "disk full, not
    /// applied" was there after a restart). A failed frame write leaves no valid commit frame:
    /// the commit frame is the last one written, as long as SQLite does not pad the WAL to a
    /// sector boundary after it (it pads only without POWERSAFE_OVERWRITE, which Unix has by default).
    public static let commitOutcomeUnknown: Set<Int32> = [
        ioErrorFsync, ioErrorDirectoryFsync, ioErrorSharedMemorySize, ioErrorSharedMemoryMap, SQLITE_NOMEM,
    ]

    /// The error `database` reports after `code` (SQLite's message unless `message` is given).
    /// A failed write (not a read, not a sync) met when the process's errno says no space, or
    /// a database file is at the process's file-size limit, or its file system has under 1 MiB
    /// free, becomes SQLITE_FULL: SQLite reports a full disk as such on some paths only (a write
    /// hitting EFBIG, the limit of `ulimit -f` or systemd's LimitFSIZE=, is its "disk I/O
    /// error"), and the call is then RESOURCE_EXHAUSTED ("full") rather than UNAVAILABLE
    /// ("unreachable, try again").
    init(in database: OpaquePointer, code returned: Int32, message: String? = nil, sql: String?) {
        var code = returned
        var text = message ?? String(cString: sqlite3_errmsg(database))
        if Self.writeFailures.contains(code), let cause = Self.fullCause(database) {
            code = SQLITE_FULL
            text += " (\(cause))"
        }
        self.init(code: code, returnedCode: returned, message: text, sql: sql)
    }

    /// I/O errors of writing or growing a file (SQLITE_IOERR_WRITE, _TRUNCATE, _SHMSIZE): the
    /// ones a full disk or a file-size limit cause.
    static let writeFailures: Set<Int32> = [SQLITE_IOERR | (3 << 8), SQLITE_IOERR | (6 << 8), ioErrorSharedMemorySize]

    /// Why writing to `database`'s files may have failed for want of room, or nil.
    private static func fullCause(_ database: OpaquePointer) -> String? {
        let systemError = sqlite3_system_errno(database)
        if [ENOSPC, EDQUOT, EFBIG].contains(systemError) {
            return String(cString: strerror(systemError)).lowercased()
        }
        guard let name = sqlite3_db_filename(database, "main") else { return nil }
        let path = String(cString: name)
        guard !path.isEmpty else { return nil }
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max {
            for file in [path, path + "-wal"] {
                var info = stat()
                if stat(file, &info) == 0 && UInt64(info.st_size) + 65_536 > UInt64(limit.rlim_cur) {
                    return "\(file) reached the file-size limit of \(limit.rlim_cur) bytes (ulimit -f, LimitFSIZE=)"
                }
            }
        }
        if let free = FreeSpace.bytes(at: path), free < 1 << 20 {
            return "no space left on the file system holding \(path)"
        }
        return nil
    }

    /// The primary result code (the low byte), e.g. SQLITE_CONSTRAINT.
    public var primaryCode: Int32 { code & 0xFF }

    public var description: String {
        "sqlite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }
}

extension SQLiteError: DatabaseError {
    public static var subject: String { "the database" }
    public static var dataSubject: String { "the database file" }

    /// The kind of failure, from the (extended) result code alone.
    public var failure: DatabaseFailure {
        switch code {
        case Self.constraintPrimaryKey: return .constraint(.primaryKey)
        case Self.constraintUnique: return .constraint(.unique)
        case Self.constraintForeignKey: return .constraint(.foreignKey)
        case Self.constraintCheck: return .constraint(.check)
        case Self.constraintNotNull: return .constraint(.notNull)
        default: break
        }
        switch primaryCode {
        case SQLITE_CONSTRAINT: return .constraint(.other)
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .full
        case SQLITE_READONLY: return .readOnly
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .damaged
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PERM: return .unreachable
        default: return .other
        }
    }
}
