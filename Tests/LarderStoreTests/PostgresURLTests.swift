@testable import LarderPostgres
import LarderStore
import Testing

/// What `--db` takes for PostgreSQL, and how a failed login is classified: no server needed.
@Suite struct PostgresURLTests {
    @Test(arguments: ["postgres://u@h/d", "postgresql://u@h/d", "POSTGRES://u@h/d", "PostgreSQL://u@h:5/d?sslmode=require"])
    func postgresURLsInAnyCase(url: String) {
        #expect(PostgresURL.isPostgres(url))
        #expect(PostgresURL.misreadDatabase(url) == nil)
    }

    @Test func theSchemeGoesToLibpqInLowerCaseAndNothingElseChanges() {
        #expect(PostgresURL.normalized("POSTGRES://U:Pw@H:5/D?sslmode=require") == "postgres://U:Pw@H:5/D?sslmode=require")
        #expect(PostgresURL.normalized("PostgreSQL://u@h/d") == "postgresql://u@h/d")
        #expect(PostgresURL.normalized("./POSTGRES://x.sqlite") == "./POSTGRES://x.sqlite")
    }

    @Test func passwordsAreScrubbedFromLibpqMessages() {
        let url = "postgres://larder:s3cretpw@db:5432/larder?sslmode=disable&password=other%21"
        let message = "invalid connection option \"POSTGRES://larder:s3cretpw@db:5432/larder?sslmode\"; "
            + "password=other%21 was given"
        let scrubbed = PostgresURL.scrubbed(message, url: url)
        #expect(!scrubbed.contains("s3cretpw") && !scrubbed.contains("other%21"))
        #expect(scrubbed.contains("larder:***@db") && scrubbed.contains("password=***"))
    }

    /// libpq knows only lower-case schemes: `POSTGRES://` with a query string was parsed as
    /// `key=value` text, failed as an "invalid connection option", and echoed the password.
    @Test func anUpperCaseSchemeConnectsAsALowerCaseOne() {
        let url = "POSTGRESQL://nobody:s3cretpw@127.0.0.1:1/x?connect_timeout=2"
        #expect {
            _ = try PostgresConnection(url: url, connectTimeoutSeconds: 2)
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.sqlState == "08001" && !error.message.contains("s3cretpw")
                && !error.message.contains("invalid connection option") && error.message.contains("127.0.0.1")
        }
    }

    @Test(arguments: ["larder.sqlite", "/var/lib/larder/db.sqlite", "./a=b.sqlite", "postgres", "my postgres.db"])
    func sqlitePathsAreNotPostgres(path: String) {
        #expect(!PostgresURL.isPostgres(path))
        #expect(PostgresURL.misreadDatabase(path) == nil)
    }

    @Test func aKeyValueStringOrAnotherSchemeIsRefusedNotTakenForAFile() throws {
        let keyValue = try #require(PostgresURL.misreadDatabase("host=127.0.0.1 port=5432 user=larder dbname=larder"))
        #expect(keyValue.hasPrefix("a libpq key=value connection string"))
        #expect(keyValue.contains("postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"))
        #expect(PostgresURL.misreadDatabase("dbname=larder")?.hasPrefix("a libpq key=value") == true)
        let mysql = try #require(PostgresURL.misreadDatabase("mysql://u@h/d"))
        #expect(mysql.hasPrefix("a URL whose scheme is \"mysql\""))
    }

    @Test(arguments: [
        ("FATAL:  password authentication failed for user \"larder\"", "28000"),
        ("FATAL:  no pg_hba.conf entry for host \"10.0.0.5\", user \"larder\", database \"larder\"", "28000"),
        ("fe_sendauth: no password supplied", "28000"),
        ("FATAL:  role \"nobody\" does not exist", "28000"),
        ("FATAL:  database \"nope\" does not exist", "3D000"),
        ("FATAL:  too many connections for role \"larder\"", "53300"),
        ("FATAL:  remaining connection slots are reserved for non-replication superuser connections", "53300"),
        ("FATAL:  sorry, too many clients already", "53300"),
        ("connection to server at \"127.0.0.1\", port 1 failed: Connection refused", "08001"),
        ("could not translate host name \"db\" to address", "08001"),
    ])
    func loginFailuresAreClassified(message: String, state: String) {
        #expect(PostgresConnection.loginFailureState(message) == state)
    }

    @Test func refusedLoginsAreForTheOperatorAndOutagesAreNot() {
        #expect(PostgresError(sqlState: "28000", message: "x").needsTheOperator)
        #expect(PostgresError(sqlState: "28000", message: "x").failure == .loginRefused)
        #expect(PostgresError(sqlState: "3D000", message: "x").failure == .loginRefused)
        #expect(!PostgresError(sqlState: "08006", message: "x").needsTheOperator)
        #expect(!PostgresError(sqlState: PostgresError.timedOut, message: "x").needsTheOperator)
        #expect(PostgresError(sqlState: "53100", message: "disk full").needsTheOperator)
    }

    /// A URL libpq would refuse before connecting is a configuration error, found when the flags
    /// are read (exit 2), not an "unreachable, try again" at start (audit 16 L3).
    @Test("URLs libpq refuses before connecting are named as such", arguments: [
        ("postgres://u@h:notaport/d", "port \"notaport\" is not a number in 1-65535"),
        ("postgres://u:pw@h:5432,g:99999/d", "port \"99999\" is not a number in 1-65535"),
        ("postgres://[::1/a1", "IPv6 host address"),
        ("postgres://u@h/d?sslmode=bogus", "sslmode \"bogus\" is not one of"),
        ("postgres://u@h/d?nosuchparam=1", "invalid URI query parameter"),
        ("postgres://u@h/d?target_session_attrs=writable", "target_session_attrs \"writable\" is not one of"),
    ])
    func malformedURLs(url: String, fragment: String) {
        let problem = PostgresURL.problem(url)
        #expect(problem?.contains(fragment) == true, "\(problem ?? "nil")")
        #expect(problem?.contains("pw") != true, "no password in the message")
    }

    @Test("valid URLs have no problem", arguments: [
        "postgres://larder@127.0.0.1:5432/larder", "POSTGRESQL://u:p@h1:5432,h2:5433/d?target_session_attrs=read-write",
        "postgres://u@h/d?sslmode=verify-full&connect_timeout=5", "postgres:///d", "postgres://u@[::1]:5432/d",
    ])
    func validURLs(url: String) {
        #expect(PostgresURL.problem(url) == nil)
    }
}
