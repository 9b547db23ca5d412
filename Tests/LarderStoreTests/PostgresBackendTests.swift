import LarderTestSupport
import Foundation
import LarderPostgres
import Testing

/// Reports whether the PostgreSQL cases of this target ran. Locally they are
/// skipped without `LARDER_TEST_POSTGRES_URL`; CI (CI=true) must provide it.
@Suite struct PostgresBackendTests {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil || isCI,
                   "LARDER_TEST_POSTGRES_URL is not set: every PostgreSQL case of LarderStoreTests was skipped"))
    func postgresServerIsReachable() throws {
        let url = try #require(PostgresTestDatabase.adminURL, "CI must set LARDER_TEST_POSTGRES_URL")
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        #expect(try connection.query("SELECT $1::bigint + 1", [.int64(41)]).int64(row: 0, column: 0) == 42)
        #expect(Backend.all == [.sqlite, .postgres])
    }
}
