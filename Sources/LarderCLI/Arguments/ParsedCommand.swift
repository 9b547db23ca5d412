import LarderAPI
import LarderWire

/// A command line matched to a `CommandSpec`: its positional arguments and options.
public struct ParsedCommand: Sendable {
    public let spec: CommandSpec
    public let positionals: [String]
    /// Values of the options that take one, by option name.
    public let values: [String: String]
    /// The flags given, by option name.
    public let flags: Set<String>

    public init(spec: CommandSpec, positionals: [String] = [], values: [String: String] = [:], flags: Set<String> = []) {
        self.spec = spec
        self.positionals = positionals
        self.values = values
        self.flags = flags
    }

    public func value(_ option: String) -> String? { values[option] }

    public func isSet(_ flag: String) -> Bool { flags.contains(flag) }

    /// The first positional argument (the id of `get`, `update`, `delete`).
    var id: String { positionals.first ?? "" }

    /// An integer option, checked against `range`.
    func int32(_ option: String, in range: ClosedRange<Int32>) throws(CLIError) -> Int32? {
        guard let text = value(option) else { return nil }
        guard let number = Int32(text), range.contains(number) else {
            throw .usage("--\(option) must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"",
                         spec)
        }
        return number
    }

    /// A time option: RFC 3339, or a date meaning local midnight; within the years 1-9999 in UTC,
    /// the times the server keeps (checked here, so that every time is a usage error, exit 2).
    func timestamp(_ option: String, _ localTime: LocalTime) throws(CLIError) -> Timestamp? {
        guard let text = value(option) else { return nil }
        let time: Timestamp
        do {
            time = try localTime.parse(text)
        } catch {
            throw .usage("--\(option): \(error.description)", spec)
        }
        guard TimestampRange.seconds.contains(time.seconds) else {
            let first = Timestamp(seconds: TimestampRange.minSeconds).rfc3339()
            let last = Timestamp(seconds: TimestampRange.maxSeconds, nanos: 999_999_999).rfc3339()
            throw .usage("--\(option): \(SafeText.quoted(text)) is \(time.rfc3339()), outside \(first) to \(last), "
                         + "the times larder keeps", spec)
        }
        return time
    }

    /// A meal category option (breakfast, lunch, dinner or snack).
    func mealCategory(_ option: String) throws(CLIError) -> MealCategory? {
        guard let text = value(option) else { return nil }
        guard let category = MealCategory(name: text), category != .unspecified else {
            throw .usage("--\(option) must be one of \(MealCategoryNames.choices), got \"\(text)\"", spec)
        }
        return category
    }

    /// The update mask for the options given, from (option, field path) pairs.
    /// - Throws: a usage error when none of them is given.
    func updateMask(_ fields: [(option: String, path: String)]) throws(CLIError) -> FieldMask {
        let paths = fields.filter { value($0.option) != nil }.map(\.path)
        guard !paths.isEmpty else {
            let names = fields.map { "--\($0.option)" }.joined(separator: ", ")
            throw .usage("nothing to update; give at least one of \(names)", spec)
        }
        return FieldMask(paths: paths)
    }
}

enum MealCategoryNames {
    static let all = MealCategory.allCases.filter { $0 != .unspecified }.map(\.shortName)
    static let choices = all.joined(separator: ", ")
}
