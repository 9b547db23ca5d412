import LarderPostgres
import LarderReactor
import LarderServer
import LarderSystem
import LarderTLS
import LarderWire

/// Parses `larder-server` flags and their environment variables into a configuration.
///
/// Every flag `--some-flag` can also be set with `LARDER_SOME_FLAG`; a flag on
/// the command line wins over the environment.
public enum ServerCommandLine {
    /// What the command line asked for.
    public enum Action: Sendable {
        case serve(LaunchConfiguration)
        case help
        case version
    }

    /// One flag: its name, value placeholder (nil for a switch), help text and how it applies.
    struct Option: Sendable {
        let name: String
        let value: String?
        let help: String
        let apply: @Sendable (inout LaunchConfiguration, String) throws(UsageError) -> Void

        var environmentName: String {
            "LARDER_" + name.uppercased().replacing("-", with: "_")
        }
    }

    /// A command-line mistake, printed with a pointer to --help.
    public struct UsageError: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }

        /// The error for a value that came from the environment variable `variable`, not the command
        /// line: `LARDER_READERS: expected …` where the option wrote `--readers: expected …`.
        func fromEnvironment(flag: String, variable: String) -> UsageError {
            guard description.hasPrefix(flag) else { return UsageError("\(variable): \(description)") }
            return UsageError(variable + description.dropFirst(flag.count))
        }
    }

    /// A flag naming a file, stored in `field`; an empty value is a usage error.
    static func filePath(_ name: String, _ placeholder: String,
                         _ field: any WritableKeyPath<LaunchConfiguration, String?> & Sendable, help: String) -> Option {
        Option(name: name, value: placeholder, help: help) { config, value throws(UsageError) in
            guard !value.isEmpty else { throw UsageError("--\(name): expected a path") }
            config[keyPath: field] = value
        }
    }

    static let options: [Option] = [
        Option(name: "listen", value: "HOST:PORT",
               help: "address to listen on (default 127.0.0.1:7411; port 0 picks a free port, "
                   + "logged on stderr as event=listening address=HOST:PORT)") { config, value throws(UsageError) in
            config.server.listen = try listenAddress(value, flag: "listen")
        },
        Option(name: "db", value: "PATH|URL",
               help: "SQLite database file, created when missing and served by one server at a time "
                   + "(default ./larder.sqlite), or a PostgreSQL URL "
                   + "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE that several servers may share") { config, value throws(UsageError) in
            guard !value.isEmpty else { throw UsageError("--db: expected a path") }
            if let problem = PostgresURL.misreadDatabase(value) {
                throw UsageError("--db: \"\(PostgresURL.redacted(value))\" is \(problem)")
            }
            if PostgresURL.isPostgres(value), let problem = PostgresURL.problem(value) {
                throw UsageError("--db: \"\(PostgresURL.redacted(value))\" is not a valid PostgreSQL URL: \(problem)")
            }
            config.database.databasePath = value
        },
        Option(name: "durability", value: "full|normal",
               help: "full: fsync every commit before replying OK (default); normal: sync the WAL only at "
                   + "checkpoints, so an OK survives a crash of larder-server but not of the OS or a power loss "
                   + "(PostgreSQL: synchronous_commit=off, lost also if PostgreSQL crashes)") { config, value throws(UsageError) in
            guard let durability = DatabaseConfiguration.Durability(rawValue: value) else {
                throw UsageError("--durability: expected full or normal, got \"\(value)\"")
            }
            config.database.durability = durability
        },
        Option(name: "no-seed", value: nil, help: "do not fill a new database with the default groups, categories and locations") { config, value throws(UsageError) in
            config.database.seed = !(try parseSwitch(value, flag: "no-seed"))
        },
        Option(name: "readers", value: "N", help: "reader connections (threads) for read calls (default 2)") { config, value throws(UsageError) in
            config.database.readerCount = try parseInt(value, flag: "readers", range: 1...64)
        },
        Option(name: "max-frame-bytes", value: "N",
               help: "largest frame a client may send, 64 to 268435456 (256 MiB) (default 4194304)") { config, value throws(UsageError) in
            let range = ServerConfiguration.maxFrameBytesRange
            if let bytes = Int(value), bytes > range.upperBound {
                throw UsageError("--max-frame-bytes: at most \(range.upperBound) (256 MiB), got \(bytes): the server "
                    + "tells lean frames from TLS by a connection's first byte, and a longer frame's length could "
                    + "begin with 0x16, the first byte of a TLS record")
            }
            config.server.maxFrameBytes = try parseInt(value, flag: "max-frame-bytes", range: range)
        },
        Option(name: "max-connections", value: "N", help: "open connections beyond which new ones are refused, unless one has sent nothing since it connected, a second or more ago: it is closed for the new one (default 10000)") { config, value throws(UsageError) in
            config.server.maxConnections = try parseInt(value, flag: "max-connections", range: 1...1_000_000)
        },
        Option(name: "max-calls-per-connection", value: "N",
               help: "calls in flight per connection; extra calls get RESOURCE_EXHAUSTED (default 1024)") { config, value throws(UsageError) in
            config.server.maxCallsPerConnection = try parseInt(value, flag: "max-calls-per-connection", range: 1...1_000_000)
        },
        Option(name: "max-output-bytes", value: "N",
               help: "reply bytes buffered per connection before the server stops reading from it, its calls for the "
                   + "database wait to run and its other calls are refused; an HTTP/2 stream leaving more unread is reset "
                   + "(default 8388608)") { config, value throws(UsageError) in
            config.server.maxBufferedOutputBytes = try parseInt(value, flag: "max-output-bytes", range: 1024...(1 << 30))
        },
        Option(name: "memory-budget-bytes", value: "N",
               help: "bytes of unwritten replies, undecoded requests and waiting calls, all connections together, "
                   + "before the server pushes back (a soft limit: what runs already finishes): past it, connections "
                   + "over their share get RESOURCE_EXHAUSTED for new calls, are not read and lose their open streams "
                   + "(default 268435456)") { config, value throws(UsageError) in
            config.server.memoryBudgetBytes = try parseInt(value, flag: "memory-budget-bytes", range: (1 << 20)...(1 << 40))
        },
        Option(name: "write-stall-timeout", value: "SECONDS",
               help: "drop a connection that has not read any of its replies for this long; 0 = never (default 30)") { config, value throws(UsageError) in
            config.server.writeStallTimeoutSeconds = try parseInt(value, flag: "write-stall-timeout", range: 0...86_400)
        },
        Option(name: "idle-timeout", value: "SECONDS",
               help: "close connections silent this long with no call in flight; 0 = never (default 300)") { config, value throws(UsageError) in
            config.server.idleTimeoutSeconds = try parseInt(value, flag: "idle-timeout", range: 0...86_400)
        },
        Option(name: "keepalive-time", value: "SECONDS",
               help: "send a PING to an HTTP/2 connection silent this long with a call in flight (a Watch or "
                   + "reflection stream), and close it if nothing comes back within --keepalive-timeout: a client "
                   + "that vanished holds no stream forever; 0 = never (default 7200)") { config, value throws(UsageError) in
            config.server.keepaliveTimeSeconds = try parseInt(value, flag: "keepalive-time", range: 0...86_400)
        },
        Option(name: "keepalive-timeout", value: "SECONDS",
               help: "time an HTTP/2 client has to answer a keepalive PING (default 20)") { config, value throws(UsageError) in
            config.server.keepaliveTimeoutSeconds = try parseInt(value, flag: "keepalive-timeout", range: 1...3_600)
        },
        Option(name: "frame-timeout", value: "SECONDS",
               help: "time a client may take to finish a frame it started (default 10)") { config, value throws(UsageError) in
            config.server.frameTimeoutSeconds = try parseInt(value, flag: "frame-timeout", range: 1...3_600)
        },
        Option(name: "drain-timeout", value: "SECONDS",
               help: "on SIGTERM/SIGINT, time to finish calls in flight before exiting; "
                   + "streams still open then end UNAVAILABLE (default 10)") { config, value throws(UsageError) in
            config.server.drainTimeoutSeconds = try parseInt(value, flag: "drain-timeout", range: 0...3_600)
        },
        Option(name: "busy-timeout", value: "SECONDS",
               help: "SQLite: how long a transaction waits for a lock another process holds on the database "
                   + "before failing UNAVAILABLE (default 5); writes queued behind it wait for it first") { config, value throws(UsageError) in
            config.database.busyTimeoutSeconds = try parseInt(value, flag: "busy-timeout", range: 0...3_600)
        },
        Option(name: "log-level", value: "debug|info|warn|error", help: "minimum level of log lines (default info; the listening lines are written at every level)") { config, value throws(UsageError) in
            guard let level = Logger.Level(name: value) else { throw UsageError("--log-level: expected debug, info, warn or error, got \"\(value)\"") }
            config.server.logLevel = level
        },
        filePath("auth-token-file", "PATH", \.server.authTokenFile,
                 help: "require 'authorization: Bearer <token>' metadata on every call but health; the file holds the token "
                       + "(RFC 6750: A-Z a-z 0-9 - . _ ~ + /, then = padding; at most 4096 bytes), or up to 8 of them "
                       + "one per line, any accepted (a rotation's overlap); read again on SIGHUP"),
        filePath("tls-cert", "FILE", \.server.tlsCertificateFile,
                 help: "TLS certificate chain (PEM: the certificate, then intermediates); with --tls-key turns TLS on, "
                       + "on the same port as cleartext (the first bytes tell them apart); reread on SIGHUP"),
        filePath("tls-key", "FILE", \.server.tlsKeyFile,
                 help: "the TLS certificate's private key (unencrypted PEM; keep it mode 0600); reread on SIGHUP"),
        filePath("tls-client-ca", "FILE", \.server.tlsClientCAFile,
                 help: "ask TLS clients for a certificate signed by a CA in FILE (PEM); its subject is in the access log; "
                       + "reread on SIGHUP"),
        Option(name: "tls-client-auth", value: "require|optional",
               help: "with --tls-client-ca: refuse clients without a certificate (require) or accept them (optional, default); require without --tls-client-ca is refused; with require, cleartext connections get health checks only") { config, value throws(UsageError) in
            guard let mode = TLSClientAuthentication(rawValue: value) else {
                throw UsageError("--tls-client-auth: expected require or optional, got \"\(value)\"")
            }
            config.server.tlsClientAuthentication = mode
        },
        Option(name: "tls-only", value: nil,
               help: "refuse cleartext connections (they get an UNAVAILABLE connection error)") { config, value throws(UsageError) in
            config.server.tlsOnly = try parseSwitch(value, flag: "tls-only")
        },
        Option(name: "tls-handshake-timeout", value: "SECONDS",
               help: "time a client may take to complete a TLS handshake it started (with --tls-only, from its connect) (default 10)") { config, value throws(UsageError) in
            config.server.tlsHandshakeTimeoutSeconds = try parseInt(value, flag: "tls-handshake-timeout", range: 1...3_600)
        },
        Option(name: "tls-max-handshakes", value: "N",
               help: "TLS handshakes in progress at once; further TLS connections wait, unread, for a slot "
                   + "(their handshake timeout runs) (default 1024)") { config, value throws(UsageError) in
            config.server.tlsMaxHandshakes = try parseInt(value, flag: "tls-max-handshakes", range: 1...1_000_000)
        },
        Option(name: "tls-evict-handshakes-after", value: "SECONDS",
               help: "with every handshake slot taken, a new TLS connection takes the slot of the oldest handshake "
                   + "once it has run this long, closing it (0: never, new ones wait) (default 1)") { config, value throws(UsageError) in
            config.server.tlsEvictHandshakesAfterSeconds = try parseInt(value, flag: "tls-evict-handshakes-after",
                                                                        range: 0...3_600)
        },
        Option(name: "insecure", value: nil,
               help: "allow --listen on a non-loopback address without TLS and --auth-token-file, and --metrics-listen on one (metrics have no auth); without it, cleartext connections from remote peers to a non-loopback TLS server get health checks only") { config, value throws(UsageError) in
            config.server.insecure = try parseSwitch(value, flag: "insecure")
        },
        Option(name: "metrics-listen", value: "HOST:PORT",
               help: "serve Prometheus metrics over plain HTTP at GET /metrics on this address (default: off)") { config, value throws(UsageError) in
            config.server.metricsListen = try listenAddress(value, flag: "metrics-listen")
        },
        Option(name: "access-log", value: nil, help: "log every call: method, status, duration") { config, value throws(UsageError) in
            config.server.accessLog = try parseSwitch(value, flag: "access-log")
        },
    ]

    /// Parses `arguments` (without the program name) over `environment`. An option given on the
    /// command line is not read from the environment at all, so a bad variable it overrides is no error.
    public static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Action {
        var given: [(option: Option, value: String)] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help }
            if argument == "--version" { return .version }
            guard argument.hasPrefix("--") else { throw UsageError("unexpected argument \"\(argument)\"") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown flag --\(name)")
            }
            if option.value == nil {
                given.append((option, value ?? "true"))
                continue
            }
            if value == nil {
                guard index < arguments.count else { throw UsageError("--\(name) needs a value (\(option.value ?? ""))") }
                value = arguments[index]
                index += 1
            }
            given.append((option, value ?? ""))
        }
        var configuration = LaunchConfiguration()
        let namesGiven = Set(given.map(\.option.name))
        for option in options where !namesGiven.contains(option.name) {
            guard let value = environment[option.environmentName] else { continue }
            do {
                try option.apply(&configuration, value)
            } catch {
                throw error.fromEnvironment(flag: "--\(option.name)", variable: option.environmentName)
            }
        }
        for (option, value) in given { try option.apply(&configuration, value) }
        return .serve(configuration)
    }

    /// The `--help` text, generated from the same table the parser uses.
    public static var helpText: String {
        var text = """
        larder-server — the Larder RPC server (length-prefixed protobuf over TCP, SQLite or PostgreSQL storage)

        USAGE: larder-server [--listen HOST:PORT] [--db PATH|URL] [options]

        OPTIONS (each also settable through the environment variable shown):

        """
        for option in options {
            let flag = "--\(option.name)" + (option.value.map { " \($0)" } ?? "")
            text += "  \(flag)\n      \(option.help)\n      env: \(option.environmentName)\n"
        }
        text += """
          --help, -h
              show this help
          --version
              show the version, the commit it was built from and the protocol

        SIGNALS: SIGTERM or SIGINT drain gracefully (health turns NOT_SERVING, new calls get
        UNAVAILABLE, calls in flight finish, the database is checkpointed and closed), exit 0.
        SIGHUP rereads --auth-token-file and the TLS files (--tls-cert, --tls-key, --tls-client-ca);
        a bad file keeps the old token or certificate, logged as an error; connections stay up.

        """
        return text
    }

    static func parseInt(_ value: String, flag: String, range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw UsageError("--\(flag): expected a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(value)\"")
        }
        return number
    }

    /// A `--listen`-style address, or the reason it is none.
    static func listenAddress(_ value: String, flag: String) throws(UsageError) -> SocketAddress {
        do {
            return try SocketAddress(parsing: value)
        } catch {
            throw UsageError("--\(flag): \"\(value)\" \(error.reason); expected HOST:PORT, e.g. 127.0.0.1:7411 or [::1]:7411")
        }
    }

    static func parseSwitch(_ value: String, flag: String) throws(UsageError) -> Bool {
        if value.isEmpty { return false }
        guard let on = SwitchText.value(value) else {
            throw UsageError("--\(flag): expected true or false (or 1/0, yes/no, on/off), got \"\(value)\"")
        }
        return on
    }
}
