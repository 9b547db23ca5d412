public import LarderStore
import LarderWire

/// A failed libpq call: the SQLSTATE, the server's message, and the SQL when known.
///
/// Errors that never reached the server (connecting, a lost connection) carry
/// SQLSTATE class 08 (`connection_exception`).
public struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. "23505" (unique_violation).
    public var sqlState: String
    public var message: String
    /// The server's DETAIL line, when it sent one.
    public var detail: String?
    /// The violated constraint, for integrity errors.
    public var constraint: String?
    public var sql: String?

    public init(sqlState: String, message: String, detail: String? = nil, constraint: String? = nil,
                sql: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.constraint = constraint
        self.sql = sql
    }

    /// SQLSTATEs the backend treats specially.
    public static let uniqueViolation = "23505"
    public static let foreignKeyViolation = "23503"
    public static let checkViolation = "23514"
    public static let notNullViolation = "23502"
    public static let serializationFailure = "40001"
    public static let deadlockDetected = "40P01"
    public static let inFailedTransaction = "25P02"
    public static let undefinedFunction = "42883"
    public static let duplicateTable = "42P07"
    public static let undefinedTable = "42P01"
    public static let undefinedColumn = "42703"
    public static let connectionFailure = "08006"
    public static let connectionDoesNotExist = "08003"
    /// Larder's own (class 08): the server did not answer within the statement timeout.
    public static let timedOut = "08L01"
    /// Larder's own (class 08): the call's deadline passed while waiting for the server.
    public static let deadlineExceeded = "08L02"
    /// The session is read-only (a hot standby, or `default_transaction_read_only`).
    public static let readOnlyTransaction = "25006"
    /// `lock_timeout` ran out (or NOWAIT found the lock taken).
    public static let lockNotAvailable = "55P03"

    /// The two-character class, e.g. "23" (integrity constraint violation).
    public var sqlStateClass: Substring { sqlState.prefix(2) }

    /// True when the connection is gone or the server is going away: reconnect and retry later.
    public var isConnectionProblem: Bool {
        sqlStateClass == "08" || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// True when the transaction lost a race with another one and may simply be run again.
    public var isTransient: Bool {
        [Self.serializationFailure, Self.deadlockDetected, Self.inFailedTransaction].contains(sqlState)
    }

    public var description: String {
        "postgres error \(sqlState): \(message)" + (detail.map { " (\($0))" } ?? "") + (sql.map { " (in \($0))" } ?? "")
    }
}

extension PostgresError: DatabaseError {
    public static var subject: String { "the PostgreSQL server" }

    /// A lost connection is not for the operator to mend: the store reconnects by itself, and
    /// the outage is logged once as `database_lost` / `database_regained`.
    public var needsTheOperator: Bool { !isConnectionProblem && failure.needsTheOperator }
    public static var dataSubject: String { "the PostgreSQL data" }

    /// The kind of failure, from the SQLSTATE alone.
    public var failure: DatabaseFailure {
        if sqlState == Self.deadlineExceeded { return .deadlineExceeded }
        if isConnectionProblem { return .unreachable }
        if isTransient { return .conflict }
        switch sqlState {
        case Self.uniqueViolation: return .constraint(.unique)
        case Self.foreignKeyViolation: return .constraint(.foreignKey)
        case Self.checkViolation: return .constraint(.check)
        case Self.notNullViolation: return .constraint(.notNull)
        case Self.readOnlyTransaction: return .readOnly
        case "42501": return .permissionDenied
        case Self.undefinedTable, Self.undefinedColumn: return .schemaMissing
        case "57014": return .statementCancelled
        case Self.lockNotAvailable: return .busy
        case "XX001", "XX002": return .damaged
        default: break
        }
        switch sqlStateClass {
        case "23": return .constraint(.other)
        case "53": return .full
        case "28", "3D": return .loginRefused
        default: return .other
        }
    }
}
