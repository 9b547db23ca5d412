import LarderClient
import LarderWire

/// What a command line asks for.
public enum ParseOutcome: Sendable {
    /// Print the help of `topic` to stdout.
    case help(HelpTopic)
    /// Run a command.
    case run(ParsedCommand, GlobalOptions)
    /// `larder bench …`: the words after `bench`, and the global options given before it.
    case bench(arguments: [String], globals: GlobalOptions, serverText: String?, token: String?)
    /// `--version`: print larder's version, commit and protocol.
    case version
}

/// Which usage text to show.
public enum HelpTopic: Equatable, Sendable {
    case top
    case resource(String)
    /// A command by its path, e.g. `meals add` or `health`.
    case command(String)
}

/// Hand-written command-line parsing: global options anywhere, then a
/// resource and a command word, positional ids and the command's `--options`.
public struct ArgumentParser: Sendable {
    public let catalog: CommandCatalog

    public init(catalog: CommandCatalog) {
        self.catalog = catalog
    }

    /// Parses `arguments` (without the program name).
    /// - Throws: `CLIError.usage` naming the offending word.
    public func parse(_ arguments: [String], environment: [String: String] = [:]) throws(CLIError) -> ParseOutcome {
        var state = State()
        if let server = environment["LARDER_SERVER"], !server.isEmpty { state.serverText = (server, "LARDER_SERVER") }
        if let token = environment["LARDER_TOKEN"], !token.isEmpty { state.token = token }
        let helpRequested = arguments.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
        if !helpRequested && arguments.prefix(while: { $0 != "--" }).contains("--version") { return .version }
        do {
            if let outcome = try scan(arguments, into: &state) { return outcome }
        } catch {
            if helpRequested { return .help(state.topic) }
            throw error
        }
        if helpRequested { return .help(state.topic) }
        return try finish(state)
    }

    private struct State {
        var globals = GlobalOptions()
        var serverText: (text: String, source: String)?
        var token: String?
        var resource: ResourceSpec?
        var command: CommandSpec?
        var positionals: [String] = []
        var values: [String: String] = [:]
        var flags: Set<String> = []
        /// `--help` or `-h` seen so far.
        var helpSeen = false

        var topic: HelpTopic {
            if let command { return .command(command.path) }
            if let resource { return .resource(resource.name) }
            return .top
        }

        /// The usage to point at in an error.
        var usagePath: String {
            if let command { return command.usagePath }
            if let resource { return "larder \(resource.name)" }
            return "larder"
        }
    }

    /// Walks the words; returns early for `bench` and `help`.
    private func scan(_ arguments: [String], into state: inout State) throws(CLIError) -> ParseOutcome? {
        var index = 0
        var onlyPositionals = false
        func usage(_ message: String) -> CLIError { .usage(message, command: state.usagePath) }

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                if !onlyPositionals, state.command == nil {
                    if let outcome = try selectWord(argument, rest: Array(arguments[index...]), state: &state) {
                        return outcome
                    }
                    continue
                }
                guard state.command != nil else { throw usage("missing command before '\(argument)'") }
                state.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            // An option: --name, --name=value or -h.
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func takeValue(_ placeholder: String) throws(CLIError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else { throw usage("\(name) needs a value (\(name) \(placeholder))") }
                index += 1
                return arguments[index - 1]
            }
            switch name {
            case "--help", "-h":
                state.helpSeen = true
                continue
            case "--json":
                if inlineValue != nil { throw usage("--json takes no value") }
                state.globals.json = true
                continue
            case "--server":
                state.serverText = (try takeValue("HOST:PORT"), "--server")
                continue
            case "--timeout":
                state.globals.timeout = try Self.parseTimeout(try takeValue("SECONDS"), usagePath: state.usagePath)
                continue
            case "--token":
                let token = try takeValue("TOKEN")
                guard !token.isEmpty else { throw usage("--token must not be empty") }
                state.token = token
                continue
            default:
                break
            }
            guard let command = state.command else {
                if let resource = state.resource {
                    throw usage("unknown option '\(name)'; give a command first: \(Self.commandList(resource))")
                }
                throw usage("unknown option '\(name)'")
            }
            guard name.hasPrefix("--"), let option = command.option(named: String(name.dropFirst(2))) else {
                throw usage("unknown option '\(name)' for '\(command.usagePath)'")
            }
            if option.takesValue {
                let value = try takeValue(option.valueName ?? "VALUE")
                guard state.values[option.name] == nil else { throw usage("--\(option.name) given more than once") }
                state.values[option.name] = value
            } else {
                if inlineValue != nil { throw usage("--\(option.name) takes no value") }
                state.flags.insert(option.name)
            }
        }
        return nil
    }

    /// Handles a resource or command word; returns an outcome for `bench` and `help`.
    private func selectWord(_ word: String, rest: [String], state: inout State) throws(CLIError) -> ParseOutcome? {
        if let resource = state.resource {
            guard let command = resource.command(named: word) else {
                throw .usage("unknown command '\(word)' for 'larder \(resource.name)'; expected one of: "
                             + Self.commandList(resource), command: "larder \(resource.name)")
            }
            state.command = command
            return nil
        }
        switch word {
        case "bench":
            try applyServerAndToken(&state)
            return .bench(arguments: (state.helpSeen ? ["--help"] : []) + rest, globals: state.globals, serverText: state.serverText?.text,
                          token: state.token)
        case "help":
            return .help(helpTopic(rest))
        default:
            break
        }
        if let command = catalog.command(named: word) {
            state.command = command
        } else if let resource = catalog.resource(named: word) {
            state.resource = resource
        } else {
            throw .usage("unknown command '\(word)'; expected one of: \(topLevelWords.joined(separator: ", "))",
                         command: "larder")
        }
        return nil
    }

    /// `larder help [RESOURCE [COMMAND]]`.
    private func helpTopic(_ words: [String]) -> HelpTopic {
        guard let first = words.first else { return .top }
        if let command = catalog.command(named: first) { return .command(command.path) }
        guard let resource = catalog.resource(named: first) else { return .top }
        if words.count > 1, let command = resource.command(named: words[1]) { return .command(command.path) }
        return .resource(resource.name)
    }

    private var topLevelWords: [String] {
        catalog.resources.map(\.name) + catalog.commands.map(\.name) + ["bench", "help"]
    }

    private static func commandList(_ resource: ResourceSpec) -> String {
        resource.commands.map(\.name).joined(separator: ", ")
    }

    /// Checks the words collected against the command's spec.
    private func finish(_ state: State) throws(CLIError) -> ParseOutcome {
        var state = state
        guard let command = state.command else {
            if let resource = state.resource {
                throw .usage("missing command for 'larder \(resource.name)'; expected one of: "
                             + Self.commandList(resource), command: "larder \(resource.name)")
            }
            throw .usage("missing command; expected one of: \(topLevelWords.joined(separator: ", "))",
                         command: "larder")
        }
        if state.positionals.count < command.positionals.count {
            let missing = command.positionals[state.positionals.count...].joined(separator: " ")
            throw .usage("missing \(missing)", command)
        }
        let allowed = command.positionals.count + command.optionalPositionals.count
        if state.positionals.count > allowed {
            throw .usage("unexpected argument '\(state.positionals[allowed])'", command)
        }
        for option in command.options where option.isRequired {
            guard state.values[option.name] != nil else { throw .usage("missing \(option.synopsis)", command) }
        }
        try applyServerAndToken(&state)
        return .run(ParsedCommand(spec: command, positionals: state.positionals, values: state.values,
                                  flags: state.flags), state.globals)
    }

    private func applyServerAndToken(_ state: inout State) throws(CLIError) {
        if let (text, source) = state.serverText {
            do {
                state.globals.server = try ServerAddress(parsing: text)
            } catch {
                throw .usage("\(source): \(error.message)", command: state.usagePath)
            }
        }
        state.globals.token = state.token
    }

    /// Seconds, > 0 and at most one day; fractions allowed.
    static func parseTimeout(_ text: String, usagePath: String) throws(CLIError) -> Duration {
        guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw .usage("--timeout must be a number of seconds above 0 and at most 86400, got \"\(text)\"",
                         command: usagePath)
        }
        return .milliseconds(max(1, Int64((seconds * 1000).rounded())))
    }
}
