import LarderAPI
import LarderClient
import LarderJSON
import LarderWire

/// What a running command needs: the global options, a lazily opened
/// connection, the user's time zone and the output sink.
public final class CommandContext {
    public let globals: GlobalOptions
    public let localTime: LocalTime
    private let stdout: OutputSink
    private var client: LarderClient?
    /// The exit status when the command returns normally (`larder health` sets 1 when not serving).
    public var exitStatus: Int32 = ExitCode.success

    public init(globals: GlobalOptions, localTime: LocalTime, stdout: OutputSink) {
        self.globals = globals
        self.localTime = localTime
        self.stdout = stdout
    }

    deinit {
        client?.close()
    }

    /// The connection to `globals.server`, opened on first use.
    /// - Throws: `.rpc(UNAVAILABLE: cannot connect to HOST:PORT: …)`.
    func connect() throws(CLIError) -> LarderClient {
        if let client { return client }
        var options = ClientOptions(connectTimeout: globals.timeout, defaultTimeout: globals.timeout)
        if let token = globals.token { options.setBearerToken(token) }
        do {
            let client = try LarderClient(server: globals.server, options: options)
            self.client = client
            return client
        } catch {
            throw .rpc(error)
        }
    }

    /// Calls `method` on the server.
    func call<Req, Resp>(_ method: RPCMethod<Req, Resp>, _ request: Req) async throws(CLIError) -> Resp {
        let client = try connect()
        do {
            return try await client.call(method, request)
        } catch {
            throw .rpc(error)
        }
    }

    /// Writes `text` to stdout as is.
    func write(_ text: String) {
        stdout.write(text)
    }

    /// How `--json` prints messages: the proto3 JSON mapping with every scalar and
    /// repeated field, even at its default (`"calories": 0`, `"itemCategories": []`);
    /// unset message fields (timestamps) are left out.
    static var jsonOptions: ProtoJSON.Options { ProtoJSON.Options(emitDefaults: true) }

    /// Prints `message` as one proto3 JSON document with `--json`, else the text `human` builds.
    /// - Throws: `.rpc(INTERNAL)` when the message has no JSON form (a Timestamp outside years 1-9999).
    func emit<M: ProtoMessage>(_ message: M, human: () -> String) throws(CLIError) {
        guard globals.json else {
            stdout.write(human())
            return
        }
        do throws(RPCError) {
            stdout.write(try ProtoJSON.json(of: message, options: Self.jsonOptions).rendered())
        } catch {
            throw .rpc(RPCError(.internal, "\(M.protoName) does not convert to JSON: \(error.message)"))
        }
    }
}
