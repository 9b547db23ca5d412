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

    /// `words` name no command (of `larder RESOURCE` when `resource` is given); `expected` lists those there are.
    static func unknownCommand(_ words: String, of resource: String? = nil, expected: String, command: String) -> CLIError {
        .usage("\(unknownCommandText) '\(words)'" + (resource.map { " for 'larder \($0)'" } ?? "")
               + "; expected one of: \(expected)", command: command)
    }

    /// An `unknownCommand` error (`larder frob`, `larder groups frob`): there is no help to show
    /// for it, so `--help` beside it does not hide the error.
    var isUnknownCommand: Bool {
        if case .usage(let message, _) = self { return message.hasPrefix(Self.unknownCommandText + " '") }
        return false
    }

    private static let unknownCommandText = "unknown command"
}
