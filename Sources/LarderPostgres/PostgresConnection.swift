#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ

/// One libpq connection; owns the `PGconn` and closes it.
///
/// Statements with data always go through `run(_:_:)` (a named prepared
/// statement, prepared on first use) or `query(_:_:)`, with bound parameters;
/// `execute(_:)` is for fixed SQL only (transaction control, schema).
/// Not thread-safe and not `Sendable`: one thread uses it at a time.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    /// The libpq keywords and values the connection was opened with, for `reconnect()`.
    private let parameters: (keywords: [String], values: [String])
    /// The URL as given, whose passwords are scrubbed from libpq's messages.
    private let url: String
    private var prepared: Set<String> = []
    private var parameterBytes: [UInt8] = []
    private var parameterOffsets: [Int] = []
    /// Where the connection goes, without the password; for messages and logs.
    public let target: String

    /// Connects to `url` (a `postgres://` or `postgresql://` URI, or a libpq
    /// key=value string); `database` replaces the URL's database when given.
    /// Notices (such as "already exists, skipping") are dropped, not printed.
    ///
    /// Unless the URL says otherwise, the connection asks for a read-write session
    /// (`target_session_attrs=read-write`: of several hosts, the primary) and
    /// turns on TCP keepalives, so a peer that vanished is noticed in seconds.
    public init(url: String, database: String? = nil, applicationName: String = "larder",
                connectTimeoutSeconds: Int = 10) throws(PostgresError) {
        target = PostgresURL.redacted(url)
        // Keywords before "dbname" are defaults the URL may override; those after it override the URL.
        var keywords = ["connect_timeout", "application_name", "target_session_attrs", "keepalives",
                        "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "dbname"]
        var values = [String(max(2, connectTimeoutSeconds)), applicationName, "read-write", "1",
                      "5", "2", "3", "10000", PostgresURL.normalized(url)]
        if let database {
            keywords.append("dbname")
            values.append(database)
        }
        parameters = (keywords, values)
        self.url = url
        handle = try Self.connect(keywords, values, target: target, url: url)
    }

    /// Opens a new libpq connection, in non-blocking mode, or throws: 08001 when the server
    /// cannot be reached, else the SQLSTATE its refusal means (`loginFailureState`).
    /// libpq's message is scrubbed of `url`'s passwords: it may quote the connection string.
    private static func connect(_ keywords: [String], _ values: [String],
                                target: String, url: String) throws(PostgresError) -> OpaquePointer {
        let connection = Self.withCStringArray(keywords) { keywords in
            Self.withCStringArray(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(sqlState: "08001", message: "cannot connect to \(target): out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK, PQsetnonblocking(connection, 1) == 0 else {
            let message = PostgresURL.scrubbed(Self.trimmed(PQerrorMessage(connection)), url: url)
            PQfinish(connection)
            throw PostgresError(sqlState: loginFailureState(message), message: "cannot connect to \(target): \(message)")
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        return connection
    }

    /// The SQLSTATE of a failed login, from libpq's message (libpq reports none before a
    /// session exists): class 28 for a refused login (password, role, pg_hba.conf), 3D000 for
    /// a database that does not exist, 53300 for too many connections, 08001 (unreachable:
    /// retry) for anything else. The server's texts are English unless its `lc_messages` says
    /// otherwise; a translated refusal reads as unreachable.
    static func loginFailureState(_ message: String) -> String {
        let text = message.lowercased()
        let refusals = ["password authentication failed", "no pg_hba.conf entry", "no password supplied",
                        "password is required", "authentication failed for user", "pg_hba.conf rejects"]
        if refusals.contains(where: text.contains) || (text.contains("role \"") && text.contains("does not exist")) {
            return "28000"
        }
        if text.contains("database \"") && text.contains("does not exist") { return "3D000" }
        if ["too many connections", "connection slots are reserved", "too many clients"].contains(where: text.contains) {
            return "53300"
        }
        return "08001"
    }

    deinit { close() }

    /// Closes the connection; later calls fail with SQLSTATE 08003 until `reconnect()`. Idempotent.
    public func close() {
        guard let connection = handle else { return }
        handle = nil
        prepared.removeAll()
        PQfinish(connection)
    }

    /// How long one statement may wait for the server (client side) before the
    /// connection is dropped with SQLSTATE `PostgresError.timedOut`; nil = no limit.
    public var statementTimeoutNanoseconds: UInt64?
    /// A monotonic-clock instant (`CLOCK_MONOTONIC` nanoseconds) after which waiting
    /// stops with SQLSTATE `PostgresError.deadlineExceeded` (the call's deadline); nil = none.
    public var deadline: UInt64?

    /// True while the connection to the server is up (as far as libpq knows).
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// True while a transaction is open (healthy or failed).
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Opens the connection anew with the same parameters (closing the old one
    /// first); prepared statements are gone. With several hosts, libpq tries each in turn.
    public func reconnect() throws(PostgresError) {
        close()
        do throws(PostgresError) {
            handle = try Self.connect(parameters.keywords, parameters.values, target: target, url: url)
        } catch {
            // A refused login keeps its own SQLSTATE (PERMISSION_DENIED, not "unreachable, try again").
            throw error.isConnectionProblem ? PostgresError(sqlState: PostgresError.connectionFailure, message: error.message)
                : error
        }
    }

    /// True when the idle connection is known to be dead: closed, or the server
    /// hung up (or sent a fatal error) since the last statement. Reads whatever
    /// the server sent meanwhile without waiting, so checking costs one `poll(2)`.
    public var isStale: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return true }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK
    }

    /// Runs fixed SQL without parameters (one or more statements; the last one's result).
    @discardableResult
    public func execute(_ sql: String) throws(PostgresError) -> PostgresResult {
        let connection = try connected()
        return try finish(PQsendQuery(connection, sql), sql: sql)
    }

    /// Runs `sql` once with bound parameters (`$1`, `$2`, …), unprepared.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        let connection = try connected()
        let sent = withParameters(parameters) { count, values in
            PQsendQueryParams(connection, sql, count, nil, values, nil, nil, 0)
        }
        return try finish(sent, sql: sql)
    }

    /// Runs the statement `name` with bound parameters, preparing it from `sql`
    /// the first time this connection sees that name.
    @discardableResult
    public func run(_ name: String, sql: String, _ parameters: [PostgresValue]) throws(PostgresError) -> PostgresResult {
        let connection = try connected()
        if !prepared.contains(name) {
            _ = try finish(PQsendPrepare(connection, name, sql, Int32(parameters.count), nil), sql: sql)
            prepared.insert(name)
        }
        let sent = withParameters(parameters) { count, values in
            PQsendQueryPrepared(connection, name, count, values, nil, nil, 0)
        }
        return try finish(sent, sql: sql)
    }

    // MARK: Internals

    private static let closedError = PostgresError(sqlState: PostgresError.connectionDoesNotExist,
                                                   message: "the connection is closed")

    private func connected() throws(PostgresError) -> OpaquePointer {
        guard let handle else { throw Self.closedError }
        return handle
    }

    /// Lays the parameters out as NUL-terminated text in one reused buffer and
    /// passes libpq an array of pointers into it, valid only during `body`.
    private func withParameters(
        _ parameters: [PostgresValue],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> Int32
    ) -> Int32 {
        guard !parameters.isEmpty else { return body(0, nil) }
        parameterBytes.removeAll(keepingCapacity: true)
        parameterOffsets.removeAll(keepingCapacity: true)
        for parameter in parameters {
            parameterOffsets.append(parameterBytes.count)
            parameter.appendText(to: &parameterBytes)
        }
        let offsets = parameterOffsets
        return parameterBytes.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return body(0, nil) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                let pointers: [UnsafePointer<CChar>?] = offsets.map { text + $0 }
                return pointers.withUnsafeBufferPointer { body(Int32(pointers.count), $0.baseAddress) }
            }
        }
    }

    /// Waits (bounded) for the results of the statement just sent (`sent` is the
    /// PQsend* return value), then wraps the last one, or throws the first error.
    private func finish(_ sent: Int32, sql: String) throws(PostgresError) -> PostgresResult {
        guard sent == 1, let connection = handle else { throw connectionError(sql: sql) }
        let result = try awaitResult(connection, sql: sql)
        return try check(result, sql: sql)
    }

    /// Wraps a successful result, or throws the error it (or the connection) reports.
    private func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
        guard let result else { throw connectionError(sql: sql) }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            return PostgresResult(handle: result, sql: sql)
        }
        defer { PQclear(result) }
        let field = { (code: Int32) -> String? in
            guard let value = PQresultErrorField(result, code) else { return nil }
            return String(cString: value)
        }
        var sqlState = field(clibpq_diag_sqlstate()) ?? "XX000"
        var message = field(clibpq_diag_message_primary()) ?? Self.trimmed(PQresultErrorMessage(result))
        if let handle, PQstatus(handle) != CONNECTION_OK {
            sqlState = PostgresError.connectionFailure
            if message.isEmpty { message = Self.trimmed(PQerrorMessage(handle)) }
        }
        throw PostgresError(sqlState: sqlState, message: message, detail: field(clibpq_diag_message_detail()),
                            constraint: field(clibpq_diag_constraint_name()), sql: sql)
    }

    func connectionError(sql: String) -> PostgresError {
        guard let handle else { return Self.closedError }
        let bad = PQstatus(handle) != CONNECTION_OK
        return PostgresError(sqlState: bad ? PostgresError.connectionFailure : "XX000",
                             message: Self.trimmed(PQerrorMessage(handle)), sql: sql)
    }

    static func trimmed(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        var message = String(cString: text)
        while message.last?.isWhitespace == true { message.removeLast() }
        return message
    }

    /// Passes NUL-terminated copies of `strings`, then a NULL, to `body`; frees the copies after.
    private static func withCStringArray<R>(_ strings: [String],
                                            _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let pointers = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
