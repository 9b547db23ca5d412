import Foundation
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

    /// The environment variables larder reads (the bench a subset of them); the server's own,
    /// such as `LARDER_DB`, are not larder's to check.
    public static let environmentVariables: Set<String> = [
        "LARDER_SERVER", "LARDER_TOKEN", "LARDER_TOKEN_FILE", "LARDER_TLS", "LARDER_CA", "LARDER_SERVER_NAME",
        "LARDER_INSECURE_SKIP_VERIFY", "LARDER_CERT", "LARDER_KEY", "LARDER_TIMEOUT",
    ]

    /// Parses `arguments` (without the program name).
    /// - Throws: `CLIError.usage` naming the offending word.
    public func parse(_ arguments: [String], environment: [String: String] = [:]) throws(CLIError) -> ParseOutcome {
        var state = State()
        if let server = environment["LARDER_SERVER"], !server.isEmpty { state.serverText = (server, "LARDER_SERVER") }
        if let token = environment["LARDER_TOKEN"], !token.isEmpty { state.token = (token, "LARDER_TOKEN") }
        if state.token == nil, let path = environment["LARDER_TOKEN_FILE"], !path.isEmpty {
            state.tokenFile = (path, "LARDER_TOKEN_FILE")
        }
        if let value = environment["LARDER_TLS"], !value.isEmpty {
            state.tls = try Self.switchValue(value, name: "LARDER_TLS")
        }
        if let path = environment["LARDER_CA"], !path.isEmpty { state.tlsOptions.caFile = path }
        if let name = environment["LARDER_SERVER_NAME"], !name.isEmpty { state.tlsOptions.serverName = name }
        if let value = environment["LARDER_INSECURE_SKIP_VERIFY"], !value.isEmpty {
            state.tlsOptions.insecureSkipVerify = try Self.switchValue(value, name: "LARDER_INSECURE_SKIP_VERIFY")
        }
        if let path = environment["LARDER_CERT"], !path.isEmpty { state.tlsOptions.certificateFile = path }
        if let path = environment["LARDER_KEY"], !path.isEmpty { state.tlsOptions.keyFile = path }
        if let timeout = environment["LARDER_TIMEOUT"], !timeout.isEmpty {
            state.globals.timeout = try DurationText.parseTimeout(timeout, flag: "LARDER_TIMEOUT", usagePath: "larder")
        }
        let helpRequested = arguments.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
        if !helpRequested && arguments.prefix(while: { $0 != "--" }).contains("--version") { return .version }
        do {
            if let outcome = try scan(arguments, into: &state) { return outcome }
        } catch {
            if helpRequested && !error.isUnknownCommand { return .help(state.topic) }
            throw error
        }
        if helpRequested { return .help(state.topic) }
        return try finish(state)
    }

    private struct State {
        var globals = GlobalOptions()
        var serverText: (text: String, source: String)?
        /// The token and where it came from (`--token`, `LARDER_TOKEN`).
        var token: (text: String, source: String)?
        /// A file to read the token from, and where its path came from.
        var tokenFile: (path: String, source: String)?
        /// `--tls` or `LARDER_TLS`, and the TLS settings; the TLS flags given on the command line.
        var tls = false
        var tlsOptions = ClientTLS()
        var tlsFlagsGiven: [String] = []
        /// `--timeout` and `-H` as given on the command line, which `bench` takes as its
        /// `--connect-timeout` and `-m`.
        var timeoutGiven: String?
        var headersGiven: [String] = []
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
            // An option: --name, --name=value, -x or -x VALUE (also -xVALUE).
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    inlineValue = String(argument[argument.index(after: equals)...])
                }
            } else if argument.count > 2 {
                name = String(argument.prefix(2))
                inlineValue = String(argument.dropFirst(2))
            }
            let usagePath = state.usagePath
            let command = state.command
            func takeValue(_ placeholder: String) throws(CLIError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else {
                    throw .usage("\(name) needs a value (\(name) \(placeholder))", command: usagePath)
                }
                let next = arguments[index]
                // `--name --json` is a forgotten value far more often than a name that reads "--json".
                if Self.isKnownOption(next, of: command) {
                    let long = Self.longForm(name, of: command)
                    throw .usage("\(name) needs a value (got the flag \(next); write \(long)=\(next) to mean that text)",
                                 command: usagePath)
                }
                index += 1
                return next
            }
            if try scanGlobal(name, inlineValue: inlineValue, takeValue: takeValue, into: &state) { continue }
            guard let command = state.command else {
                if let resource = state.resource {
                    throw usage("unknown option '\(name)'; give a command first: \(Self.commandList(resource))")
                }
                throw usage("unknown option '\(name)'")
            }
            guard let option = Self.option(name, of: command) else {
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

    /// Applies a global option; false when `name` is not one.
    private func scanGlobal(_ name: String, inlineValue: String?, takeValue: (String) throws(CLIError) -> String,
                            into state: inout State) throws(CLIError) -> Bool {
        func usage(_ message: String) -> CLIError { .usage(message, command: state.usagePath) }
        switch name {
        case "--help", "-h":
            state.helpSeen = true
        case "--json":
            if inlineValue != nil { throw usage("--json takes no value") }
            state.globals.output = .json
        case "--output", "-o":
            let text = try takeValue("FORMAT")
            guard let format = GlobalOptions.OutputFormat(rawValue: text) else {
                let choices = GlobalOptions.OutputFormat.allCases.map(\.rawValue).joined(separator: ", ")
                throw usage("\(name) must be one of \(choices), got \"\(text)\"")
            }
            state.globals.output = format
        case "--wide":
            if inlineValue != nil { throw usage("--wide takes no value") }
            state.globals.wide = true
        case "--server":
            state.serverText = (try takeValue("HOST:PORT"), "--server")
        case "--timeout":
            let text = try takeValue("DURATION")
            state.globals.timeout = try DurationText.parseTimeout(text, flag: "--timeout", usagePath: state.usagePath)
            state.timeoutGiven = text
        case "--token":
            let token = try takeValue("TOKEN")
            guard !token.isEmpty else { throw usage("--token must not be empty") }
            if state.tokenFile?.source == "--token-file" { throw usage("give --token or --token-file, not both") }
            state.token = (token, "--token")
            state.tokenFile = nil
        case "--token-file":
            let path = try takeValue("PATH")
            guard !path.isEmpty else { throw usage("--token-file must not be empty") }
            if state.token?.source == "--token" { throw usage("give --token or --token-file, not both") }
            state.tokenFile = (path, "--token-file")
            state.token = nil
        case "--tls":
            if inlineValue != nil { throw usage("--tls takes no value") }
            state.tls = true
        case "--ca":
            let path = try takeValue("FILE")
            guard !path.isEmpty else { throw usage("--ca must not be empty") }
            state.tlsOptions.caFile = path
            state.tlsFlagsGiven.append("--ca")
        case "--server-name":
            let name = try takeValue("NAME")
            guard !name.isEmpty else { throw usage("--server-name must not be empty") }
            state.tlsOptions.serverName = name
            state.tlsFlagsGiven.append("--server-name")
        case "--cert", "--key":
            let path = try takeValue("FILE")
            guard !path.isEmpty else { throw usage("\(name) must not be empty") }
            if name == "--cert" { state.tlsOptions.certificateFile = path } else { state.tlsOptions.keyFile = path }
            state.tlsFlagsGiven.append(name)
        case "--insecure-skip-verify":
            if inlineValue != nil { throw usage("--insecure-skip-verify takes no value") }
            state.tlsOptions.insecureSkipVerify = true
            state.tlsFlagsGiven.append("--insecure-skip-verify")
        case "--header", "-H":
            let text = try takeValue("'KEY: VALUE'")
            let (key, value) = try Self.header(text, flag: name, usagePath: state.usagePath)
            state.globals.metadata[key] = value
            state.headersGiven.append("\(key): \(value)")
        default:
            return false
        }
        return true
    }

    /// `-H 'key: value'` as a lower-case key and a trimmed value.
    static func header(_ text: String, flag: String, usagePath: String) throws(CLIError) -> (String, String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw .usage("\(flag) must look like 'key: value', got \"\(text)\"", command: usagePath)
        }
        let key = text[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let allowed = key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        guard !key.isEmpty, allowed else {
            throw .usage("\(flag): the key of \"\(text)\" must be letters, digits, '-', '_' or '.'", command: usagePath)
        }
        return (key, value)
    }

    /// Whether `word` is `--NAME` or `--NAME=…` for a global option or an option of `command`.
    static func isKnownOption(_ word: String, of command: CommandSpec?) -> Bool {
        if word.count == 2, word.first == "-", let letter = word.last, letter.isLetter {
            return GlobalOptions.specs.contains { $0.short == letter } || command.flatMap { option(word, of: $0) } != nil
        }
        guard word.hasPrefix("--") else { return false }
        let name = String(word.dropFirst(2).prefix { $0 != "=" })
        return GlobalOptions.specs.contains { $0.name == name } || command?.option(named: name) != nil
    }

    /// `--data` for `-d`: the long form of an option as written, where `--data=VALUE` can be written.
    static func longForm(_ written: String, of command: CommandSpec?) -> String {
        guard !written.hasPrefix("--"), written.count == 2, let letter = written.last else { return written }
        let spec = GlobalOptions.specs.first { $0.short == letter } ?? command.flatMap { option(written, of: $0) }
        return spec.map { "--\($0.name)" } ?? written
    }

    /// The command's option written as `--name` or `-x`.
    private static func option(_ written: String, of command: CommandSpec) -> OptionSpec? {
        if written.hasPrefix("--") { return command.option(named: String(written.dropFirst(2))) }
        guard written.count == 2, let letter = written.last else { return nil }
        return command.options.first { $0.short == letter }
    }

    /// Handles a resource or command word; returns an outcome for `bench` and `help`.
    private func selectWord(_ word: String, rest: [String], state: inout State) throws(CLIError) -> ParseOutcome? {
        if let resource = state.resource {
            guard let command = resource.command(named: word) else {
                throw .unknownCommand(word, of: resource.name, expected: Self.commandList(resource),
                                      command: "larder \(resource.name)")
            }
            state.command = command
            return nil
        }
        switch word {
        case "bench":
            try applyServerAndToken(&state, checkingTLS: false)
            if state.globals.output == .ids {
                throw .usage("larder bench prints a report, not ids: drop -o ids (--format json|csv|html picks the report's form)",
                             command: "larder bench")
            }
            // The TLS flags, --timeout and -H given before `bench` reach it as its own (it reads
            // the environment itself).
            return .bench(arguments: (state.helpSeen ? ["--help"] : []) + Self.benchTLSArguments(state)
                              + Self.benchGlobalArguments(state) + (try Self.benchOwnArguments(rest)),
                          globals: state.globals, serverText: state.serverText?.text, token: state.globals.token)
        case "help":
            return .help(try helpTopic(rest))
        default:
            break
        }
        if let command = catalog.command(named: word) {
            state.command = command
        } else if let resource = catalog.resource(named: word) {
            state.resource = resource
        } else {
            throw .unknownCommand(word, expected: topLevelWords.joined(separator: ", "), command: "larder")
        }
        return nil
    }

    /// `larder help [RESOURCE [COMMAND]]`.
    /// - Throws: a usage error for a word that names no command.
    private func helpTopic(_ words: [String]) throws(CLIError) -> HelpTopic {
        let words = words.filter { !$0.hasPrefix("-") }
        guard let first = words.first, first != "help" || words.count > 1 else { return .top }
        if first == "bench" { return .command("bench") }
        if let command = catalog.command(named: first) {
            guard words.count == 1 else { throw .usage("'\(first)' has no subcommand '\(words[1])'", command: "larder") }
            return .command(command.path)
        }
        guard let resource = catalog.resource(named: first) else {
            throw .unknownCommand(first, expected: topLevelWords.joined(separator: ", "), command: "larder")
        }
        guard words.count > 1 else { return .resource(resource.name) }
        guard let command = resource.command(named: words[1]), words.count == 2 else {
            throw .unknownCommand(words.dropFirst().joined(separator: " "), of: resource.name,
                                  expected: Self.commandList(resource), command: "larder")
        }
        return .command(command.path)
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
            guard state.values[option.name] != nil else { throw .usage("missing \(option.usageForm)", command) }
        }
        try applyServerAndToken(&state)
        return .run(ParsedCommand(spec: command, positionals: state.positionals, values: state.values,
                                  flags: state.flags), state.globals)
    }

    /// `--tls`, then each TLS flag given on the command line with its value, as `larder bench` takes them.
    private static func benchTLSArguments(_ state: State) -> [String] {
        var arguments = state.tls ? ["--tls"] : []
        for flag in state.tlsFlagsGiven {
            let value: String?
            switch flag {
            case "--ca": value = state.tlsOptions.caFile
            case "--server-name": value = state.tlsOptions.serverName
            case "--cert": value = state.tlsOptions.certificateFile
            case "--key": value = state.tlsOptions.keyFile
            default: value = nil
            }
            arguments += [flag] + (value.map { [$0] } ?? [])
        }
        return arguments
    }

    /// The words after `bench` as it takes them: `--token-file FILE` (a global option it has no
    /// flag for) read into `--token`; `-o` or `--output` with an output format's name refused,
    /// since after `bench` they name the report's file and `-o json` would write a file `json`.
    private static func benchOwnArguments(_ rest: [String]) throws(CLIError) -> [String] {
        var arguments: [String] = []
        var index = 0
        while index < rest.count {
            let word = rest[index]
            index += 1
            if word == "--" {
                arguments += rest[(index - 1)...]
                break
            }
            let parts = word.hasPrefix("--") ? word.split(separator: "=", maxSplits: 1).map(String.init) : [word]
            let name = parts[0]
            let inline = parts.count == 2 ? parts[1] : nil
            switch name {
            case "--token-file":
                guard let path = inline ?? (index < rest.count ? rest[index] : nil) else {
                    throw .usage("--token-file needs a FILE", command: "larder bench")
                }
                if inline == nil { index += 1 }
                arguments += ["--token", try TokenFile.read(path, source: "--token-file", usagePath: "larder bench")]
            case "-o", "--output":
                let value = inline ?? (index < rest.count ? rest[index] : nil)
                if let value, GlobalOptions.OutputFormat(rawValue: value) != nil {
                    throw .usage("after bench, \(name) names the report's file, not a format: for a JSON report use "
                                 + "--format json (or -o json before bench); for a file of that name, -o ./\(value)",
                                 command: "larder bench")
                }
                arguments.append(word)
            default:
                arguments.append(word)
            }
        }
        return arguments
    }

    /// `--timeout` as bench's `--connect-timeout` (bench sets no per-call deadline: it measures
    /// latency), each `-H` as a `-m`.
    private static func benchGlobalArguments(_ state: State) -> [String] {
        (state.timeoutGiven.map { ["--connect-timeout", $0] } ?? []) + state.headersGiven.flatMap { ["-m", $0] }
    }

    private func applyServerAndToken(_ state: inout State, checkingTLS: Bool = true) throws(CLIError) {
        if let (text, source) = state.serverText {
            do {
                state.globals.server = try ServerAddress(parsing: text)
            } catch {
                throw .usage("\(source): \(error.message)", command: state.usagePath)
            }
        }
        if let (path, source) = state.tokenFile {
            state.globals.token = try TokenFile.read(path, source: source, usagePath: state.usagePath)
        } else {
            state.globals.token = state.token?.text
        }
        if state.tls {
            guard (state.tlsOptions.certificateFile == nil) == (state.tlsOptions.keyFile == nil) else {
                throw .usage("a client certificate needs both --cert FILE and --key FILE (or LARDER_CERT and LARDER_KEY)",
                             command: state.usagePath)
            }
            // A file larder cannot read, or one that holds no usable PEM (a key that does not
            // match its certificate), is a usage error (exit 2) like any value it checks itself.
            let files = [("--ca", "LARDER_CA", state.tlsOptions.caFile), ("--cert", "LARDER_CERT", state.tlsOptions.certificateFile),
                         ("--key", "LARDER_KEY", state.tlsOptions.keyFile)]
            for case let (flag, variable, path?) in files where checkingTLS && access(path, R_OK) != 0 {
                let source = state.tlsFlagsGiven.contains(flag) ? flag : variable
                throw .usage("\(source) \(path): cannot read the file (\(String(cString: strerror(errno))))",
                             command: state.usagePath)
            }
            if checkingTLS && files.contains(where: { $0.2 != nil }) {
                do throws(RPCError) { try state.tlsOptions.checkFiles() } catch {
                    throw .usage(error.message, command: state.usagePath)
                }
            }
            state.globals.tls = state.tlsOptions
        } else if checkingTLS, let flag = state.tlsFlagsGiven.first {
            throw .usage("\(flag) applies to TLS connections: add --tls", command: state.usagePath)
        }
    }

    /// `LARDER_TLS=1` and the like: 1/true/yes/on or 0/false/no/off.
    private static func switchValue(_ value: String, name: String) throws(CLIError) -> Bool {
        guard let on = SwitchText.value(value) else { throw .usage(SwitchText.refusal(value, name: name), command: "larder") }
        return on
    }
}
