import CSQLite
public import LarderStore
import LarderWire

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
    public static let constraintCheck: Int32 = SQLITE_CONSTRAINT | (1 << 8)
    public static let constraintForeignKey: Int32 = SQLITE_CONSTRAINT | (3 << 8)
    public static let constraintNotNull: Int32 = SQLITE_CONSTRAINT | (5 << 8)
    public static let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)
    public static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)

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
