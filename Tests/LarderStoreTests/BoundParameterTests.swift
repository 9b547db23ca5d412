import CSQLite
import Foundation
@testable import LarderSQLite
import Testing

/// SQL is only ever built from constants: every value a client sends reaches
/// SQLite as a bound parameter, never as SQL text.
@Suite("SQL with bound parameters only")
struct BoundParameterTests {
    /// Statements without values to bind (transaction control).
    static let constantStatements: Set<SQLiteQuery> = [
        .begin, .beginImmediate, .commit, .rollback, .savepoint, .release, .rollbackToSavepoint,
    ]

    /// `?N` placeholders in `sql`, by number.
    static func placeholders(_ sql: String) -> Set<Int> {
        let regex = /\?([0-9]+)/
        return Set(sql.matches(of: regex).compactMap { Int($0.output.1) })
    }

    @Test("every statement's text is a constant, with numbered placeholders for its values",
          arguments: SQLiteQuery.allCases)
    func statementIsConstant(_ query: SQLiteQuery) throws {
        #expect(!query.sql.contains("'") && !query.sql.contains("\""), "no literal strings: \(query.sql)")
        #expect(!query.sql.contains(/\?(?![0-9])/), "only numbered placeholders: \(query.sql)")
        let numbers = Self.placeholders(query.sql)
        if Self.constantStatements.contains(query) {
            #expect(numbers.isEmpty)
        } else {
            #expect(!numbers.isEmpty, "\(query) takes values, so it must have placeholders")
        }

        // SQLite agrees: it sees exactly these parameters.
        let db = try TestDatabaseHandle()
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(db.handle, query.sql, -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        #expect(Int(sqlite3_bind_parameter_count(statement)) == (numbers.max() ?? 0))
    }

    /// Interpolations allowed in SQL text elsewhere in LarderSQLite: integers
    /// from the server's own configuration or schema, never from a client.
    static let reviewedInterpolations: Set<String> = [
        "max(0, options.busyTimeoutMilliseconds)",  // Int32 option
        "max(1024, cacheKilobytes)",  // Int option (the reader or writer cache size)
        "max(0, options.mmapBytes)",  // Int option
        "SQLiteSchema.latestVersion",  // Int constant
        "walLimit",  // Int64 computed from options
    ]
    /// Non-literal SQL arguments, each a constant: `SQLiteQuery.sql`, `pragmaText`'s
    /// parameter (called with literals), a migration from `SQLiteSchema`.
    static let reviewedArguments: Set<String> = ["query.sql", "sql", "migration"]

    static var sourceDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/LarderSQLite")
    }

    @Test("every SQL text handed to SQLite in LarderSQLite is a literal or a reviewed constant")
    func callSitesUseConstants() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.sourceDirectory.path)
            .filter { $0.hasSuffix(".swift") }
        #expect(files.contains("SQLiteQuery.swift"))
        var callSites = 0
        for file in files {
            let text = try String(contentsOf: Self.sourceDirectory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                for match in line.matches(of: /(?:\.execute|\.prepare|pragmaText)\((.*)\)/) {
                    var argument = String(match.output.1)
                    if argument.hasPrefix("writerConnection, ") { argument.removeFirst("writerConnection, ".count) }
                    if argument.hasPrefix("connection, ") { argument.removeFirst("connection, ".count) }
                    if argument.hasPrefix("_ ") { continue }  // a declaration
                    callSites += 1
                    for interpolation in argument.ranges(of: "\\(") {
                        let rest = argument[interpolation.upperBound...]
                        #expect(Self.reviewedInterpolations.contains { rest.hasPrefix($0 + ")") },
                                "\(file): unreviewed interpolation in SQL: \(line)")
                    }
                    let isLiteral = argument.first == "\"" || argument.contains("? \"")
                    #expect(isLiteral || Self.reviewedArguments.contains(argument),
                            "\(file): SQL from an unreviewed expression: \(line)")
                }
            }
        }
        #expect(callSites >= 15, "the scan finds the call sites")

        // SQLiteQuery interpolates only its own static column lists and clauses.
        let queries = try String(contentsOf: Self.sourceDirectory.appendingPathComponent("SQLiteQuery.swift"),
                                 encoding: .utf8)
        for interpolation in queries.matches(of: /\\\(([^)]*)\)/) {
            #expect(interpolation.output.1.hasPrefix("Self."), "SQLiteQuery interpolates \(interpolation.output.1)")
        }
    }
}

/// A bare SQLite handle on an empty migrated database, for preparing statements.
private final class TestDatabaseHandle {
    let database: TestDatabase
    let connection: SQLiteConnection
    let handle: OpaquePointer

    init() throws {
        database = try TestDatabase()
        connection = try SQLiteConnection(path: database.path, flags: SQLITE_OPEN_READONLY)
        handle = try connection.database()
    }
}
