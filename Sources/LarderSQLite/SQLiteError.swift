import CSQLite
public import LarderWire

/// A failed SQLite call: the extended result code, SQLite's message, and the SQL when known.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code, e.g. 2067 (SQLITE_CONSTRAINT_UNIQUE).
    public var code: Int32
    public var message: String
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Extended codes Swift cannot import (they are macros built from expressions).
    public static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)
    public static let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)
    public static let constraintForeignKey: Int32 = SQLITE_CONSTRAINT | (3 << 8)

    /// The primary result code (the low byte), e.g. SQLITE_CONSTRAINT.
    public var primaryCode: Int32 { code & 0xFF }

    public var description: String {
        "sqlite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }

    /// The canonical status for errors that are not constraint violations.
    public var rpcError: RPCError {
        switch primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return RPCError.unavailable("the database is busy, try again: \(message)")
        case SQLITE_FULL:
            return RPCError(.resourceExhausted, "the database or disk is full: \(message)")
        case SQLITE_READONLY:
            return RPCError.failedPrecondition("the database is read-only: \(message)")
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return RPCError(.dataLoss, "the database file is damaged: \(message)")
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PERM:
            return RPCError.unavailable("cannot access the database: \(message)")
        case SQLITE_CONSTRAINT:
            return RPCError.failedPrecondition("constraint violated: \(message)")
        default:
            return RPCError.internalError("database error \(code): \(message)")
        }
    }
}
