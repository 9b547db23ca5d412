public import LarderClient

/// Options accepted anywhere on the command line.
public struct GlobalOptions: Equatable, Sendable {
    /// How results are printed (`-o`, `--output`).
    public enum OutputFormat: String, CaseIterable, Sendable {
        /// Tables and detail blocks for people.
        case table
        /// One proto3 JSON document.
        case json
        /// The ids of the results, one a line, for scripts.
        case ids
    }

    /// `--server HOST:PORT`, else `LARDER_SERVER`, else 127.0.0.1:7411.
    public var server: ServerAddress = .defaultAddress
    /// `--timeout DURATION`, else `LARDER_TIMEOUT`: connect timeout and per-call deadline.
    public var timeout: Duration = .seconds(10)
    /// `-o table|json|ids`; `--json` is `-o json`.
    public var output: OutputFormat = .table
    /// `--wide`: tables show every cell in full instead of fitting the terminal.
    public var wide = false
    /// `--token TOKEN`, `--token-file PATH`, else `LARDER_TOKEN`: sent as `authorization: Bearer TOKEN`.
    public var token: String?
    /// `-H 'key: value'`: metadata sent with every call (keys lower case).
    public var metadata: [String: String] = [:]
    /// `--tls [--ca FILE] [--server-name NAME] [--insecure-skip-verify] [--cert FILE --key FILE]`,
    /// else `LARDER_TLS` and the like; nil = cleartext.
    public var tls: ClientTLS?

    public init() {}

    /// `--json`: the reply as one proto3 JSON document on stdout (defaults included) instead of tables.
    public var json: Bool {
        get { output == .json }
        set { output = newValue ? .json : .table }
    }

    /// The names of the global options, for the parser, the usage text and shell completion.
    static let specs: [OptionSpec] = [
        OptionSpec("server", value: "HOST:PORT", "Server address (default 127.0.0.1:7411; env LARDER_SERVER)"),
        OptionSpec("timeout", value: "DURATION",
                   "Connect timeout and per-call deadline: 2s, 500ms, 1m, or seconds (default 10s; env LARDER_TIMEOUT)"),
        OptionSpec("output", short: "o", value: "FORMAT", "table (default), json, or ids: the ids of the results, one a line",
                   choices: OutputFormat.allCases.map(\.rawValue)),
        .flag("json", "Same as -o json: one JSON document (proto3 JSON mapping, default values included)"),
        .flag("wide", "Show every table cell in full instead of cutting long ones to fit the terminal"),
        OptionSpec("token", value: "TOKEN", "Bearer token, sent as 'authorization: Bearer TOKEN' (env LARDER_TOKEN); other users see a command line's arguments (ps): prefer --token-file or the env"),
        OptionSpec("token-file", value: "PATH", "Read the bearer token from a file (env LARDER_TOKEN_FILE)"),
        .flag("tls", "Connect with TLS, verifying the server against the system trust store or --ca (env LARDER_TLS=1)"),
        OptionSpec("ca", value: "FILE", "With --tls: trust the CA certificates in FILE (PEM) instead of the system's (env LARDER_CA)"),
        OptionSpec("server-name", value: "NAME",
                   "With --tls: the name the server's certificate must match (default: the --server host; env LARDER_SERVER_NAME)"),
        OptionSpec("cert", value: "FILE",
                   "With --tls: present this client certificate (PEM, with its chain) to a server that asks for one (env LARDER_CERT)"),
        OptionSpec("key", value: "FILE", "With --tls: the private key (PEM) of --cert (env LARDER_KEY)"),
        .flag("insecure-skip-verify",
              "With --tls: accept any server certificate (no protection against impersonation; env LARDER_INSECURE_SKIP_VERIFY=1)"),
        OptionSpec("header", short: "H", value: "'KEY: VALUE'", "Metadata sent with every call; may be repeated"),
        OptionSpec("help", short: "h", value: nil, "Show help for larder, a resource or a command"),
        .flag("version", "Show larder's version, commit and protocol ('larder version' adds the server's)"),
    ]
}
