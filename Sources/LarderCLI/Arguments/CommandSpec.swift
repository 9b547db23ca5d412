/// A `larder` command: its words, arguments, options and the code that runs it.
/// Usage texts are generated from these specs, so `--help` is always true to the code.
public struct CommandSpec: Sendable {
    public typealias Run = @Sendable (ParsedCommand, CommandContext) async throws(CLIError) -> Void

    /// The resource word (`meals`), or nil for a top-level command (`health`).
    public let resource: String?
    public let name: String
    public let summary: String
    /// Names of the positional arguments, e.g. `["ID"]`.
    public let positionals: [String]
    /// Names of positional arguments that may follow them or be left out, e.g. `["JSON"]`.
    public let optionalPositionals: [String]
    public let options: [OptionSpec]
    public let examples: [String]
    /// Proto field paths the server may name in INVALID_ARGUMENT, and the flag or argument
    /// the user gave them with: `["location.color_hex": "--color"]`.
    public let fieldFlags: [String: String]
    /// False for a command whose result has no ids (`health`, `stats`): `-o ids` is then a
    /// usage error, given before any call.
    public let printsIDs: Bool
    public let run: Run

    public init(resource: String?, name: String, summary: String, positionals: [String] = [],
                optionalPositionals: [String] = [], options: [OptionSpec] = [], examples: [String] = [],
                fieldFlags: [String: String] = [:], printsIDs: Bool = true, run: @escaping Run) {
        self.resource = resource
        self.name = name
        self.summary = summary
        self.positionals = positionals
        self.optionalPositionals = optionalPositionals
        self.options = options
        self.examples = examples
        self.fieldFlags = fieldFlags
        self.printsIDs = printsIDs
        self.run = run
    }

    /// `meals add` or `health`.
    public var path: String { resource.map { "\($0) \(name)" } ?? name }

    /// `larder meals add`.
    public var usagePath: String { "larder \(path)" }

    public func option(named name: String) -> OptionSpec? { options.first { $0.name == name } }
}

/// A resource word (`meals`) and its commands.
public struct ResourceSpec: Sendable {
    public let name: String
    public let summary: String
    public let commands: [CommandSpec]

    public init(name: String, summary: String, commands: [CommandSpec]) {
        self.name = name
        self.summary = summary
        self.commands = commands
    }

    public func command(named name: String) -> CommandSpec? { commands.first { $0.name == name } }
}

/// Every resource and top-level command of `larder`.
public struct CommandCatalog: Sendable {
    public let resources: [ResourceSpec]
    public let commands: [CommandSpec]

    public init(resources: [ResourceSpec], commands: [CommandSpec]) {
        self.resources = resources
        self.commands = commands
    }

    public func resource(named name: String) -> ResourceSpec? { resources.first { $0.name == name } }
    public func command(named name: String) -> CommandSpec? { commands.first { $0.name == name } }
}
