import LarderAPI
import LarderJSON
import LarderWire

/// `larder version`: this larder's version, commit and protocol, then the server's
/// (Admin/GetServerInfo), like `kubectl version`. `larder --version` prints the first line alone.
enum VersionCommand {
    static let spec = CommandSpec(
        resource: nil, name: "version",
        summary: "Show the version, commit and protocol of larder and of the server",
        options: [.flag("client", "Show larder's own version only; contact no server")],
        examples: ["larder version", "larder version --client", "larder --json version"],
        printsIDs: false
    ) { command, context throws(CLIError) in
        let client = ServerInfo.thisBuild()
        var server: ServerInfo?
        var failure: CLIError?
        if !command.isSet("client") {
            do throws(CLIError) {
                server = try await context.call(AdminMethods.getServerInfo, GetServerInfoRequest())
            } catch {
                failure = error
            }
        }
        // The client's part is printed even when the server cannot be asked; the error follows.
        if context.globals.json {
            var members = [JSON.Member("clientVersion", try json(client))]
            if let server { members.append(JSON.Member("serverVersion", try json(server))) }
            context.write(JSON.object(members))
        } else {
            context.write(text(client: client, server: server, context.localTime))
        }
        if let failure { throw failure }
    }

    /// `Client Version: 0.1.0 (commit …, protocol larder.rpc.v1)`, and the server's lines when known.
    static func text(client: ServerInfo, server: ServerInfo?, _ localTime: LocalTime) -> String {
        var text = "Client Version: \(client.summary)\n"
        guard let server else { return text }
        text += "Server Version: \(TerminalText.value(server.summary))\n"
        if let start = server.startTime { text += "Server Started: \(localTime.format(Timestamp(seconds: start.seconds)))\n" }
        return text
    }

    private static func json(_ info: ServerInfo) throws(CLIError) -> JSON {
        do {
            return try ProtoJSON.json(of: info, options: CommandContext.jsonOptions)
        } catch {
            throw .rpc(RPCError(.internal, "ServerInfo does not convert to JSON: \(error.message)"))
        }
    }
}
