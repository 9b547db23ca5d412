import LarderWire

/// The `--help` texts, generated from the command specs.
public enum Usage {
    /// `larder --help`.
    public static func top(_ catalog: CommandCatalog) -> String {
        var text = """
            larder: command line client of a Larder server

            Usage: larder [GLOBAL OPTIONS] COMMAND [SUBCOMMAND] [ARGUMENTS] [OPTIONS]

            Commands:

            """
        var rows = catalog.resources.map { ["  " + $0.name, $0.summary] }
        rows += catalog.commands.map { ["  " + $0.name, $0.summary] }
        rows.append(["  bench", "Load-test a server (see 'larder bench --help')"])
        rows.append(["  help", "Show help: larder help [COMMAND [SUBCOMMAND]]"])
        text += TableRenderer(columns: [.init(""), .init("")], rows: rows, showsHeader: false).render()
        text += "\n" + globalOptions()
        text += "\n" + exitStatus()
        text += "\nRun 'larder COMMAND --help' for the subcommands and options of a command.\n"
        return text
    }

    /// `larder meals --help`.
    public static func resource(_ resource: ResourceSpec) -> String {
        var text = "Usage: larder \(resource.name) SUBCOMMAND [ARGUMENTS] [OPTIONS]\n\n\(resource.summary).\n\nSubcommands:\n"
        let rows = resource.commands.map { ["  " + $0.name, $0.summary] }
        text += TableRenderer(columns: [.init(""), .init("")], rows: rows, showsHeader: false).render()
        text += "\nRun 'larder \(resource.name) SUBCOMMAND --help' for its options."
        text += " Global options (see 'larder --help') may appear anywhere.\n"
        return text
    }

    /// `larder meals add --help`.
    public static func command(_ command: CommandSpec) -> String {
        var text = "Usage: \(synopsis(command))\n\n\(command.summary).\n"
        if !command.options.isEmpty {
            text += "\nOptions:\n"
            let rows = command.options.map { option in
                ["  " + option.synopsis, option.help + (option.isRequired ? " (required)" : "")]
            }
            text += TableRenderer(columns: [.init(""), .init("")], rows: rows, showsHeader: false).render()
        }
        if command.options.contains(where: { $0.usageForm.hasSuffix(" TIME") }) { text += "\n" + times }
        text += "\n" + globalOptions()
        if !command.examples.isEmpty {
            text += "\nExamples:\n" + command.examples.map { "  \($0)\n" }.joined()
        }
        return text
    }

    /// How a TIME option is read and how times are shown, for the commands that take one.
    static let times = """
        TIME is RFC 3339 with Z or ±HH:MM (2026-11-30T08:00:00.5+08:00; a space may stand for T;
        at most 9 fraction digits; no leap second :60), in the years 0001-9999 in UTC. A date
        YYYY-MM-DD is the first instant of that day in this machine's zone (TZ, else
        /etc/localtime; for meals summary, the zone its days are counted in): midnight, the
        earlier one when midnight repeats, the end of the clock change when it is skipped, and
        the next day's start for a date skipped entirely. A time without an offset is refused.
        Tables show times in this machine's zone with its offset and up to 9 fraction digits
        (in UTC where RFC 3339 cannot write the local time); --json shows them in UTC.

        """

    /// `larder meals add --name NAME --calories N [--at TIME]`.
    public static func synopsis(_ command: CommandSpec) -> String {
        var words = [command.usagePath] + command.positionals + command.optionalPositionals.map { "[\($0)]" }
        for option in command.options {
            words.append(option.isRequired ? option.usageForm : "[\(option.usageForm)]")
        }
        return words.joined(separator: " ")
    }

    static func globalOptions() -> String {
        let rows = GlobalOptions.specs.map { ["  " + $0.synopsis, $0.help] }
        return "Global options (anywhere on the command line; after bench, -o is bench's own --output FILE):\n"
            + TableRenderer(columns: [.init(""), .init("")], rows: rows, showsHeader: false).render()
    }

    static func exitStatus() -> String {
        var text = """
            Exit status:
              0   success
              1   larder health: the server answered and is not SERVING (a draining server
                  refuses new connections, so larder health then exits 24 UNAVAILABLE)
              2   usage error: unknown command or option, or a value larder checks itself
                  (a number, a time, a choice, a file); a value only the server checks
                  (e.g. --color red) exits with the server's status, 13 INVALID_ARGUMENT
              3   the output could not be written (a full disk, a closed stdout): what was
                  written is incomplete (said on stderr)
              4   larder bench: the run could not start, or --clean-up could not delete
                  (larder bench --help)
              10 + gRPC status code for an error from the server or the connection;
                   a code outside 0-16 exits 12 (UNKNOWN); the message gives the code:

            """
        let codes = StatusCode.allCanonical.filter { $0 != .ok }
        var rows: [[String]] = []
        for start in stride(from: 0, to: codes.count, by: 3) {
            rows.append(codes[start..<min(start + 3, codes.count)].map { "\(ExitCode.forStatus($0)) \($0.name)" })
        }
        let table = TableRenderer(columns: [.init(""), .init(""), .init("")], rows: rows, showsHeader: false)
        for line in table.render().split(separator: "\n") { text += "      \(line)\n" }
        return text
    }
}
