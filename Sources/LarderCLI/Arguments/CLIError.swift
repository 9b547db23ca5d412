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
}
