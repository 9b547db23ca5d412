/// One `--option` of a command.
public struct OptionSpec: Sendable {
    /// The name without dashes: `name` for `--name`.
    public let name: String
    /// A one-letter alias (`d` for `-d`), if any.
    public let short: Character?
    /// The placeholder of the value (`NAME`); nil for a flag that takes no value.
    public let valueName: String?
    public let help: String
    public let isRequired: Bool
    /// The values it accepts, when they are a fixed few (for shell completion).
    public let choices: [String]

    public init(_ name: String, short: Character? = nil, value valueName: String?, _ help: String,
                required: Bool = false, choices: [String] = []) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
        self.isRequired = required
        self.choices = choices
    }

    /// A flag without a value, e.g. `--cascade`.
    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name, value: nil, help)
    }

    public var takesValue: Bool { valueName != nil }

    /// `--name NAME`, `--cascade`, or `-d, --data JSON`.
    public var synopsis: String {
        let long = valueName.map { "--\(name) \($0)" } ?? "--\(name)"
        return short.map { "-\($0), \(long)" } ?? long
    }

    /// `--name NAME` or `-d JSON`: the form for a usage line.
    public var usageForm: String {
        let flag = short.map { "-\($0)" } ?? "--\(name)"
        return valueName.map { "\(flag) \($0)" } ?? flag
    }
}
