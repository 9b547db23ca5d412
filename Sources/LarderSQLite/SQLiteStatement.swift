import CSQLite
import LarderWire

/// A prepared SQLite statement; owns the `sqlite3_stmt` and finalizes it.
///
/// Values are always bound as parameters (1-based). Not `Sendable`.
public final class SQLiteStatement {
    private let connection: SQLiteConnection
    private let handle: OpaquePointer
    private let database: OpaquePointer
    /// The SQL text, for error messages.
    public let sql: String

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        let db = try connection.database()
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw connection.lastError(result, sql: sql)
        }
        self.connection = connection
        self.handle = statement
        self.database = db
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds an integer to parameter `index`.
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds UTF-8 text (copied by SQLite) to parameter `index`; embedded NULs are kept.
    public func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        var text = value
        let result = text.withUTF8 { bytes -> Int32 in
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), csqlite_transient())
            }
        }
        try check(result)
    }

    /// Binds a blob (copied by SQLite) to parameter `index`.
    public func bind(blob value: [UInt8], at index: Int32) throws(SQLiteError) {
        let result = value.withUnsafeBytes { bytes -> Int32 in
            // A zero-length blob, not NULL, for an empty array.
            guard let base = bytes.baseAddress, bytes.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), csqlite_transient())
        }
        try check(result)
    }

    /// Steps once: true when a row is ready, false when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(in: database, code: result, sql: sql)
        }
    }

    /// Steps until done, for statements that return no rows.
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    /// The integer in column `index` (0-based) of the current row.
    public func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// The text in column `index` (0-based) of the current row, byte for byte ("" for NULL).
    public func string(at index: Int32) -> String {
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Calls `body` with the blob in column `index` of the current row, in
    /// place (valid only during the call), or with nil when it is NULL.
    public func withBlob<R>(at index: Int32, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        // Type first: sqlite3_column_blob returns NULL for NULL and for an empty blob alike.
        if sqlite3_column_type(handle, index) == SQLITE_NULL { return try body(nil) }
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// Makes the statement ready to run again; keeps the bindings.
    public func reset() { sqlite3_reset(handle) }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else {
            throw SQLiteError(in: database, code: result, sql: sql)
        }
    }
}
