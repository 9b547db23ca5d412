import LarderAPI
import LarderClient
import LarderJSON
import LarderWire

/// What a running command needs: the global options, a lazily opened
/// connection, the user's time zone and the output sinks.
public final class CommandContext {
    public let globals: GlobalOptions
    public let localTime: LocalTime
    /// The command being run; its `fieldFlags` turn server field names into the flags the user typed.
    public let command: CommandSpec?
    /// The columns tables may use: the terminal's width, nil with `--wide` or when unknown.
    public let tableWidth: Int?
    private let stdout: OutputSink
    private let stderr: OutputSink
    private var client: LarderClient?
    /// The exit status when the command returns normally (`larder health` sets 1 when not serving).
    public var exitStatus: Int32 = ExitCode.success

    public init(globals: GlobalOptions, localTime: LocalTime, stdout: OutputSink, stderr: OutputSink = OutputSink { _ in },
                command: CommandSpec? = nil, terminalWidth: Int? = nil) {
        self.globals = globals
        self.localTime = localTime
        self.stdout = stdout
        self.stderr = stderr
        self.command = command
        self.tableWidth = globals.wide ? nil : terminalWidth
    }

    deinit {
        client?.close()
    }

    /// The connection to `globals.server`, opened on first use.
    /// - Throws: `.rpc(UNAVAILABLE: cannot connect to HOST:PORT: …)`.
    func connect() throws(CLIError) -> LarderClient {
        if let client { return client }
        var options = ClientOptions(connectTimeout: globals.timeout, defaultTimeout: globals.timeout,
                                    metadata: globals.metadata)
        if let token = globals.token { options.setBearerToken(token) }
        options.tls = globals.tls
        if let warning = globals.server.clearTextTokenWarning(hasToken: globals.token != nil, tls: globals.tls != nil) {
            stderr.write(warning)
        }
        if globals.tls?.insecureSkipVerify == true {
            stderr.write("warning: --insecure-skip-verify: the server's certificate is not checked; anyone on the path "
                         + "can impersonate \(globals.server) and read the token and data\n")
        }
        do {
            let client = try LarderClient(server: globals.server, options: options)
            self.client = client
            return client
        } catch {
            throw .rpc(error)
        }
    }

    /// Calls `method` on the server; INVALID_ARGUMENT messages name the command's flags, not proto fields.
    func call<Req, Resp>(_ method: RPCMethod<Req, Resp>, _ request: Req) async throws(CLIError) -> Resp {
        let client = try connect()
        do {
            return try await client.call(method, request)
        } catch {
            throw .rpc(flagNamed(Self.deliveryOfWritesOnly(error, path: method.path)))
        }
    }

    /// `error` without its `RequestDelivery` unless `path` is a write (Create, Update, Delete):
    /// whether a read was sent matters to no one, and a write command's lookup of a name (a
    /// List before the Delete) cut off must not say the write may have been applied.
    static func deliveryOfWritesOnly(_ error: RPCError, path: String) -> RPCError {
        guard error.cause is RequestDelivery else { return error }
        let method = path.split(separator: "/").last ?? ""
        if ["Create", "Update", "Delete"].contains(where: { method.hasPrefix($0) }) { return error }
        return RPCError(error.code, error.message)
    }

    /// `error` with the proto field names of the command's `fieldFlags` replaced by its flags.
    func flagNamed(_ error: RPCError) -> RPCError {
        guard error.code == .invalidArgument, let command, !command.fieldFlags.isEmpty else { return error }
        let message = FieldFlagNames.rewrite(error.message, command.fieldFlags)
        return message == error.message ? error : RPCError(error.code, message)
    }

    /// Writes human-readable `text` to stdout through `TerminalText.lines`: a server's value
    /// put in without `TerminalText.value` still cannot drive the terminal.
    func write(_ text: String) {
        stdout.write(TerminalText.lines(text))
    }

    /// Writes a JSON document to stdout; its own escaping (`\u001b`) keeps it valid and inert.
    func write(_ json: JSON) {
        stdout.write(json.rendered())
    }

    /// Writes a hint for people (`next page: …`) to stderr, never into the output a script reads.
    /// Values from the server in it go through `TerminalText.value`.
    func hint(_ text: String) {
        stderr.write(TerminalText.lines(text.hasSuffix("\n") ? text : text + "\n"))
    }

    /// Writes `ids` one a line; each is escaped whole (`TerminalText.value`), so an id holding a
    /// newline or an escape sequence is still one line.
    func writeIDs(_ ids: [String]) {
        stdout.write(ids.map { TerminalText.value($0) + "\n" }.joined())
    }

    /// The usage error for `-o ids` on a command whose result has no ids.
    var noIDs: CLIError {
        .usage("-o ids: '\(command?.usagePath ?? "larder")' prints no ids; use -o table or -o json",
               command: command?.usagePath ?? "larder")
    }

    /// How `--json` prints messages: the proto3 JSON mapping with every scalar and
    /// repeated field, even at its default (`"calories": 0`, `"categories": []`);
    /// unset message fields (timestamps) are left out, and so are fields a command did not
    /// ask the server for (`emit`'s `json` edit: a group's `itemCategories` without `--with-categories`).
    static var jsonOptions: ProtoJSON.Options { ProtoJSON.Options(emitDefaults: true) }

    /// Prints `message` as `-o` asks: one proto3 JSON document (passed through `json`, which may leave out
    /// what the command did not ask for), the `ids` one a line, or the text `human` builds
    /// (which passes server values through `TerminalText.value`).
    /// - Throws: `.rpc(INTERNAL)` when the message has no JSON form (a Timestamp outside years 1-9999);
    ///   a usage error for `-o ids` on a command whose result has no ids.
    func emit<M: ProtoMessage>(_ message: M, ids: (() -> [String])? = nil, json edit: (JSON) -> JSON = { $0 },
                               human: () -> String) throws(CLIError) {
        switch globals.output {
        case .table:
            write(human())
        case .ids:
            guard let ids else { throw noIDs }
            writeIDs(ids())
        case .json:
            do throws(RPCError) {
                write(edit(try ProtoJSON.json(of: message, options: Self.jsonOptions)))
            } catch {
                throw .rpc(RPCError(.internal, "\(M.protoName) does not convert to JSON: \(error.message)"))
            }
        }
    }
}
