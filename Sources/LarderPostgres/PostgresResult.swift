import CLibPQ

/// The rows of one successful statement, in libpq's text format; owns the
/// `PGresult` and clears it. Not `Sendable`.
public final class PostgresResult {
    private let handle: OpaquePointer
    /// The SQL that produced it, for error messages.
    let sql: String

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit { PQclear(handle) }

    /// How many rows the statement returned.
    public var rowCount: Int { Int(PQntuples(handle)) }

    /// The command tag, e.g. "INSERT 0 1" or "ROLLBACK".
    public var commandStatus: String {
        guard let status = PQcmdStatus(handle) else { return "" }
        return String(cString: status)
    }

    /// Rows changed by an INSERT, UPDATE or DELETE (0 for other statements).
    public var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// True when the value at (`row`, `column`) is SQL NULL.
    public func isNull(row: Int, column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) != 0
    }

    /// The text of the value at (`row`, `column`), byte for byte ("" for NULL).
    public func string(row: Int, column: Int) -> String {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard length > 0, let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return "" }
        return value.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The integer at (`row`, `column`); throws for NULL or text that is not a 64-bit integer.
    public func int64(row: Int, column: Int) throws(PostgresError) -> Int64 {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard length > 0, !isNull(row: row, column: column),
              let value = PQgetvalue(handle, Int32(row), Int32(column)) else {
            throw notAnInteger(row: row, column: column)
        }
        let parsed = value.withMemoryRebound(to: UInt8.self, capacity: length) {
            Self.parseInt64(UnsafeBufferPointer(start: $0, count: length))
        }
        guard let parsed else { throw notAnInteger(row: row, column: column) }
        return parsed
    }

    /// Decimal ASCII with an optional leading minus, without allocating.
    private static func parseInt64(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative
                ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }

    private func notAnInteger(row: Int, column: Int) -> PostgresError {
        PostgresError(sqlState: "XX000", message: "row \(row) column \(column) is not a 64-bit integer: "
                      + "\"\(string(row: row, column: column))\"", sql: sql)
    }
}
