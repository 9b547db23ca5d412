import CSQLite
import LarderWire

/// One SQLite database connection; owns the `sqlite3` handle and closes it.
///
/// Not thread-safe and not `Sendable`: one thread uses it at a time.
public final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// The busy handler's state, kept as long as the handle may call it.
    private var busyState: SQLiteBusyState?

    /// Opens `path` with `flags` (`SQLITE_OPEN_*`); extended result codes are on.
    public init(path: String, flags: Int32) throws(SQLiteError) {
        var db: OpaquePointer?
        let result = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            let code = db.map { sqlite3_extended_errcode($0) } ?? result
            // sqlite3_open_v2 allocates a handle even when it fails.
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: "cannot open \"\(path)\": \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Closes the connection; later calls fail with SQLITE_MISUSE. Idempotent.
    public func close() {
        guard let db = handle else { return }
        handle = nil
        // close_v2 defers the close until every statement is finalized.
        sqlite3_close_v2(db)
    }

    /// The handle, or an error once closed.
    func database() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        return handle
    }

    /// Waits for a lock another connection holds as `wait` says (instead of `PRAGMA busy_timeout`).
    func waitWhenBusy(_ wait: SQLiteBusyWait) throws(SQLiteError) {
        let db = try database()
        let state = SQLiteBusyState(policy: wait)
        let result = sqlite3_busy_handler(db, SQLiteBusyState.handler, Unmanaged.passUnretained(state).toOpaque())
        guard result == SQLITE_OK else { throw lastError(result, sql: nil) }
        busyState = state
    }

    /// True when the file this connection has open is no longer the one at its path
    /// (renamed, replaced or deleted; SQLITE_FCNTL_HAS_MOVED: one `stat` of the path).
    func fileHasMoved() -> Bool {
        guard let handle else { return false }
        var moved: Int32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK else { return false }
        return moved != 0
    }

    /// Runs one or more statements without parameters (schema, pragmas, transaction control).
    public func execute(_ sql: String) throws(SQLiteError) {
        let db = try database()
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard result == SQLITE_OK else {
            throw SQLiteError(in: db, code: sqlite3_extended_errcode(db), message: errorMessage.map { String(cString: $0) },
                              sql: sql)
        }
    }

    /// Compiles `sql` into a statement that can be run many times.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes(handle))
    }

    /// Rows changed by every INSERT, UPDATE and DELETE that completed on this
    /// connection (a statement that failed and was undone adds nothing).
    public var totalChanges: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_total_changes64(handle))
    }

    /// True while no transaction is open.
    public var isAutocommit: Bool {
        guard let handle else { return true }
        return sqlite3_get_autocommit(handle) != 0
    }

    /// The error SQLite reports for the last failed call on this connection.
    func lastError(_ result: Int32, sql: String?) -> SQLiteError {
        guard let handle else { return SQLiteError(code: result, message: "the connection is closed", sql: sql) }
        return SQLiteError(in: handle, code: sqlite3_extended_errcode(handle), sql: sql)
    }
}
