/// One `--option` of a command.
public struct OptionSpec: Sendable {
    /// The name without dashes: `name` for `--name`.
    public let name: String
    /// The placeholder of the value (`NAME`); nil for a flag that takes no value.
    public let valueName: String?
    public let help: String
    public let isRequired: Bool

    public init(_ name: String, value valueName: String?, _ help: String, required: Bool = false) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.isRequired = required
    }

    /// A flag without a value, e.g. `--cascade`.
    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name, value: nil, help)
    }

    public var takesValue: Bool { valueName != nil }

    /// `--name NAME` or `--cascade`.
    public var synopsis: String { valueName.map { "--\(name) \($0)" } ?? "--\(name)" }
}
