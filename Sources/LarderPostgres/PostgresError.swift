public import LarderWire

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
    public static let serializationFailure = "40001"
    public static let deadlockDetected = "40P01"
    public static let inFailedTransaction = "25P02"
    public static let undefinedFunction = "42883"
    public static let duplicateTable = "42P07"
    public static let connectionFailure = "08006"
    public static let connectionDoesNotExist = "08003"
    /// Larder's own (class 08): the server did not answer within the statement timeout.
    public static let timedOut = "08L01"
    /// Larder's own (class 08): the call's deadline passed while waiting for the server.
    public static let deadlineExceeded = "08L02"
    /// The session is read-only (a hot standby, or `default_transaction_read_only`).
    public static let readOnlyTransaction = "25006"

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

    /// The canonical status for errors that `PostgresSession` does not map to a rule of its own.
    public var rpcError: RPCError {
        if sqlState == Self.deadlineExceeded {
            return RPCError(.deadlineExceeded, "the call's deadline passed while waiting for PostgreSQL: \(message)")
        }
        if isConnectionProblem {
            return RPCError.unavailable("the PostgreSQL server is unreachable, try again: \(message)")
        }
        if isTransient {
            return RPCError(.aborted, "the transaction conflicted with a concurrent one (SQLSTATE \(sqlState)); "
                            + "retry the call: \(message)")
        }
        switch sqlStateClass {
        case "53": return RPCError(.resourceExhausted, "the PostgreSQL server is out of resources: \(message)")
        case "23": return RPCError.failedPrecondition("constraint violated: \(message)")
        case "28": return RPCError(.permissionDenied, "PostgreSQL refused the login: \(message)")
        case "XX" where sqlState == "XX001" || sqlState == "XX002":
            return RPCError(.dataLoss, "the PostgreSQL data is damaged: \(message)")
        default: break
        }
        switch sqlState {
        case "25006": return RPCError.failedPrecondition("the database is read-only: \(message)")
        case "42501": return RPCError(.permissionDenied, "PostgreSQL denied access: \(message)")
        case "57014": return RPCError(.deadlineExceeded, "the PostgreSQL statement was canceled: \(message)")
        default: return RPCError.internalError("database error \(sqlState): \(message)")
        }
    }
}
