import LarderClient

/// Options accepted anywhere on the command line.
public struct GlobalOptions: Equatable, Sendable {
    /// `--server HOST:PORT`, else `LARDER_SERVER`, else 127.0.0.1:7411.
    public var server: ServerAddress = .defaultAddress
    /// `--timeout SECONDS`: connect timeout and per-call deadline.
    public var timeout: Duration = .seconds(10)
    /// `--json`: the reply as one proto3 JSON document on stdout (defaults included) instead of tables.
    public var json = false
    /// `--token TOKEN`, else `LARDER_TOKEN`: sent as `authorization: Bearer TOKEN`.
    public var token: String?

    public init() {}

    /// The names of the global options, for the parser and the usage text.
    static let specs: [OptionSpec] = [
        OptionSpec("server", value: "HOST:PORT", "Server address (default 127.0.0.1:7411; env LARDER_SERVER)"),
        OptionSpec("timeout", value: "SECONDS", "Connect timeout and per-call deadline (default 10)"),
        .flag("json", "Print one JSON document (proto3 JSON mapping, default values included) instead of tables"),
        OptionSpec("token", value: "TOKEN", "Bearer token, sent as 'authorization: Bearer TOKEN' (env LARDER_TOKEN)"),
        .flag("help", "Show help for larder, a resource or a command (also -h)"),
        .flag("version", "Show larder's version, commit and protocol ('larder version' adds the server's)"),
    ]
}
