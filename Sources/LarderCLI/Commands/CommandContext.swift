import LarderAPI
import LarderClient
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

    /// Prints `json` with `--json`, else the text `human` builds.
    func emit(json: JSONValue, human: () -> String) {
        stdout.write(globals.json ? json.rendered() : human())
    }
}
