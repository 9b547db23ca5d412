public import LarderWire

/// Why a `larder` command failed, and so what it prints and its exit status.
public enum CLIError: Error, Equatable, Sendable {
    /// The command line is wrong; `command` names the usage to point at (`larder meals add`).
    case usage(String, command: String)
    /// The server, or the connection to it, returned an error status.
    case rpc(RPCError)

    public static func usage(_ message: String, _ spec: CommandSpec) -> CLIError {
        .usage(message, command: spec.usagePath)
    }

    /// A command word larder does not know (`larder frob`, `larder groups frob`): there is no
    /// help to show for it, so `--help` beside it does not hide the error.
    var isUnknownCommand: Bool {
        if case .usage(let message, _) = self { return message.hasPrefix("unknown command '") }
        return false
    }
}
