import LarderTestSupport
import Foundation
import Testing

/// The storage backends a test runs on.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// SQLite always; PostgreSQL when `LARDER_TEST_POSTGRES_URL` names a server
    /// (`PostgresBackendTests` reports the skip when it does not).
    static let all: [Backend] = PostgresTestDatabase.adminURL == nil ? [.sqlite] : [.sqlite, .postgres]

    var testDescription: String { rawValue }
}
