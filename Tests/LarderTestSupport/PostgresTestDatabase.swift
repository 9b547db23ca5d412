import Foundation
import LarderPostgres

/// A PostgreSQL database of one test's own, created with a random name on the
/// server `LARDER_TEST_POSTGRES_URL` points at and dropped on deinit, so tests
/// stay isolated and may run in parallel.
public final class PostgresTestDatabase: @unchecked Sendable {
    /// The server's URL from the environment (any database the user may connect to), or nil.
    public static let adminURL: String? = {
        let value = ProcessInfo.processInfo.environment["LARDER_TEST_POSTGRES_URL"] ?? ""
        return value.isEmpty ? nil : value
    }()

    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String { "LARDER_TEST_POSTGRES_URL is not set (scripts/postgres-test-cluster.sh start prints one)" }
    }

    /// The database name, `larder_test_<32 hex digits>`.
    public let name: String
    /// The URL of this database.
    public let url: String
    private let admin: String

    public init() throws {
        guard let admin = Self.adminURL else { throw NotConfigured() }
        self.admin = admin
        name = "larder_test_" + UUID().uuidString.lowercased().filter { $0 != "-" }
        let connection = try PostgresConnection(url: admin, applicationName: "larder-tests")
        defer { connection.close() }
        // The name is generated above from hex digits only, never from outside input.
        try connection.execute("CREATE DATABASE \(name)")
        guard var components = URLComponents(string: admin) else { throw NotConfigured() }
        components.path = "/" + name
        url = components.string ?? admin
    }

    deinit {
        guard let connection = try? PostgresConnection(url: admin, applicationName: "larder-tests") else { return }
        _ = try? connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        connection.close()
    }
}
