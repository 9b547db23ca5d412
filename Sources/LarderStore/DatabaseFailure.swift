public import LarderWire

/// What a database error means to Larder, in no database's terms. Each backend
/// classifies its own errors (SQLite by extended result code, PostgreSQL by
/// SQLSTATE, never by message text); `DatabaseError.rpcError` is then the one
/// place where a kind becomes a status code.
public enum DatabaseFailure: Hashable, Sendable {
    /// A constraint was violated; the backend's write maps the kinds it expects first.
    case constraint(ConstraintKind)
    /// Locked by another connection: try again.
    case busy
    /// The database cannot be opened, read or reached (I/O error, lost connection).
    case unreachable
    /// Out of disk space or another resource.
    case full
    /// The database refuses writes.
    case readOnly
    /// The stored data is damaged.
    case damaged
    /// The transaction lost a race with a concurrent one: retry.
    case conflict
    /// The call's deadline passed while waiting for the database.
    case deadlineExceeded
    /// The database cancelled the statement (a statement_timeout, or an administrator).
    case statementCancelled
    /// The database refused the login.
    case loginRefused
    /// The database denied access to an object.
    case permissionDenied
    /// The database lacks the server's tables or columns: dropped, or the database recreated,
    /// while the server ran.
    case schemaMissing
    /// Anything else: a bug or an unexpected failure, INTERNAL.
    case other

    /// True for the failures that retrying does not mend and that the server's operator must
    /// see to (an I/O error, a full disk, a read-only or damaged database, a refused login or
    /// access): the server logs them; not for a lock, a conflict or a deadline, which are
    /// the clients' to retry.
    public var needsTheOperator: Bool {
        switch self {
        case .unreachable, .full, .readOnly, .damaged, .loginRefused, .permissionDenied, .schemaMissing: true
        case .constraint, .busy, .conflict, .deadlineExceeded, .statementCancelled, .other: false
        }
    }

    /// The kinds of integrity constraint a database reports.
    public enum ConstraintKind: Hashable, Sendable {
        case primaryKey, unique, foreignKey, check, notNull, other
    }
}

/// An error raised by a database library, classified for `rpcError`.
public protocol DatabaseError: Error, Sendable, CustomStringConvertible {
    /// What the error means.
    var failure: DatabaseFailure { get }
    /// The database's own message.
    var message: String { get }
    /// How status messages name the database ("the database", "the PostgreSQL server").
    static var subject: String { get }
    /// How status messages name its stored data ("the database file", "the PostgreSQL data").
    static var dataSubject: String { get }
    /// True when a call failing on this error is logged `database_failed`: retrying does not
    /// mend it (`DatabaseFailure.needsTheOperator`, unless the backend knows better).
    var needsTheOperator: Bool { get }
}

extension DatabaseError {
    public var needsTheOperator: Bool { failure.needsTheOperator }

    /// The canonical status for this error: the one mapping from database errors to codes.
    ///
    /// The client's message carries the database's text where it helps the client act
    /// (busy, full, read-only); an INTERNAL error carries it only as its `cause`, which
    /// the server logs and never sends.
    public var rpcError: RPCError {
        let subject = Self.subject
        switch failure {
        case .constraint:
            return RPCError(.failedPrecondition, "constraint violated: \(message)", cause: self)
        case .busy:
            return RPCError(.unavailable, "\(subject) is busy, try again: \(message)", cause: self)
        case .unreachable:
            return RPCError(.unavailable, "\(subject) is unreachable, try again: \(message)", cause: self)
        case .full:
            return RPCError(.resourceExhausted, "\(subject) is full or out of resources: \(message)", cause: self)
        case .readOnly:
            return RPCError(.failedPrecondition, "\(subject) is read-only: \(message)", cause: self)
        case .damaged:
            return RPCError(.dataLoss, "\(Self.dataSubject) is damaged: \(message)", cause: self)
        case .conflict:
            return RPCError(.aborted, "the transaction conflicted with a concurrent one; retry the call: \(message)",
                            cause: self)
        case .deadlineExceeded:
            return RPCError(.deadlineExceeded, "the call's deadline passed while waiting for \(subject): \(message)",
                            cause: self)
        case .statementCancelled:
            // Never larder's own doing (its deadlines drop the connection instead): a
            // statement_timeout set for the database, role or URL, or an administrator's
            // pg_cancel_backend. Not applied, and a retry may well succeed.
            return RPCError(.unavailable, "\(subject) canceled the statement (a statement_timeout set for the "
                            + "database, role or URL, or an administrator's pg_cancel_backend), so it was not applied; "
                            + "retry: \(message)", cause: self)
        case .loginRefused:
            return RPCError(.permissionDenied, "\(subject) refused the login: \(message)", cause: self)
        case .permissionDenied:
            return RPCError(.permissionDenied, "\(subject) denied access: \(message)", cause: self)
        case .schemaMissing:
            // The database's own text (which table) goes to the log only, as for INTERNAL.
            return RPCError(.failedPrecondition, "\(Self.dataSubject) lacks a table or column this server uses (was the "
                            + "database dropped or recreated, or a table dropped or changed, by something other than "
                            + "larder-server?); the server's log names it", cause: self)
        case .other:
            return RPCError(.internal, "\(subject) failed", cause: self)
        }
    }

    /// The constraint this error violated, if it is a constraint violation.
    public var violatedConstraint: DatabaseFailure.ConstraintKind? {
        if case .constraint(let kind) = failure { return kind }
        return nil
    }
}
