public import LarderWire

/// Parses `larder bench` flags (`--flag VALUE` or `--flag=VALUE`) into options.
public enum BenchArguments {
    /// What the command line asks for.
    public enum Invocation: Sendable, Equatable {
        case run(BenchOptions)
        /// `--clean-up PREFIX`: delete what earlier runs left (server, token and metadata from the options).
        case cleanUp(BenchOptions, prefix: String)
        case help
    }

    /// Parses `arguments` (without the program and subcommand names).
    /// `LARDER_SERVER` and `LARDER_TOKEN` in `environment` set defaults for `--server` and `--token`;
    /// `LARDER_TLS`, `LARDER_CA`, `LARDER_SERVER_NAME`, `LARDER_INSECURE_SKIP_VERIFY`, `LARDER_CERT`
    /// and `LARDER_KEY` for the TLS flags, as for every `larder` command.
    /// - Throws: INVALID_ARGUMENT naming the flag, the value and the rule.
    public static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(RPCError) -> Invocation {
        var draft = try Draft(environment: environment)
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "-h" || argument == "--help" { return .help }
            let (name, inlineValue) = try flag(argument)
            draft.flagsGiven.append(name)
            if switchFlags.contains(name) {
                guard inlineValue == nil else { throw .invalidArgument("--\(name) takes no value") }
                try draft.applySwitch(name)
                continue
            }
            guard valueFlags.contains(name) else { throw .invalidArgument("unknown flag --\(name), see --help") }
            guard let value = inlineValue ?? remaining.popFirst() else {
                throw .invalidArgument("--\(name) needs a value, see --help")
            }
            try draft.applyValueFlag(name, value: value)
        }
        return try draft.invocation()
    }

    /// The flag name in `argument` (`-d`, `-m` and `-o` spelled out, without the dashes) and the value
    /// after its `=`, if any.
    /// - Throws: INVALID_ARGUMENT for an argument that is no flag.
    private static func flag(_ argument: String) throws(RPCError) -> (name: String, inlineValue: String?) {
        let shortNames = shortFlagNames
        var name: String
        if let long = shortNames[String(argument.prefix(2))], argument.count == 2 || argument.dropFirst(2).first == "=" {
            name = long + argument.dropFirst(2)
        } else {
            guard argument.hasPrefix("--") else {
                throw .invalidArgument("unexpected argument \"\(argument)\"; flags start with --, see --help")
            }
            name = String(argument.dropFirst(2))
        }
        guard let equals = name.firstIndex(of: "=") else { return (name, nil) }
        return (String(name[..<equals]), String(name[name.index(after: equals)...]))
    }

    /// `-d` → `data` and the like.
    private static let shortFlagNames = Dictionary(
        BenchFlag.all.compactMap { flag in flag.short.map { ("-\($0)", flag.name) } }, uniquingKeysWith: { first, _ in first })

    /// The flags that take no value.
    private static let switchFlags = Set(BenchFlag.all.filter { !$0.takesValue }.map(\.name))

    /// The flags that take a value.
    private static let valueFlags = Set(BenchFlag.all.filter(\.takesValue).map(\.name))
}
