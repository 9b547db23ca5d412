/// One of `larder bench`'s flags, as the parser and the shell completion scripts know it.
public struct BenchFlag: Sendable {
    /// The long name, without the dashes.
    public let name: String
    /// The one-letter form (`-d`), if any.
    public let short: Character?
    /// What the value is (`FILE`, `N`…); nil for a switch.
    public let valueName: String?
    /// The values it accepts, when they are a fixed few.
    public let choices: [String]

    init(_ name: String, short: Character? = nil, value valueName: String? = nil, choices: [String] = []) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.choices = choices
    }

    public var takesValue: Bool { valueName != nil }

    /// True when the value names a file to read or write.
    public var takesFile: Bool { valueName == "FILE" }

    /// Every flag `larder bench` takes, in `--help`'s order.
    public static let all: [BenchFlag] = [
        .init("server", value: "HOST:PORT"), .init("protocol", value: "P", choices: ["lean", "grpc"]),
        .init("workload", value: "W", choices: ["ping", "get", "create", "list", "mix"]), .init("mix", value: "MIX"),
        .init("call", value: "METHOD"), .init("data", short: "d", value: "JSON"), .init("metadata", short: "m", value: "M"),
        .init("connections", value: "C"), .init("concurrency", value: "N"), .init("threads", value: "T"),
        .init("duration", value: "D"), .init("requests", value: "R"), .init("warmup", value: "D"),
        .init("time-limit", value: "D"), .init("connect-timeout", value: "D"), .init("rate", value: "R"),
        .init("load-schedule", value: "S", choices: ["const", "step", "line"]), .init("load-start", value: "R"),
        .init("load-step", value: "R"), .init("load-step-duration", value: "D"), .init("load-end", value: "R"),
        .init("format", value: "F", choices: ["text", "json", "csv", "html"]), .init("output", short: "o", value: "FILE"),
        .init("json"), .init("hist-out", value: "FILE"), .init("keep-data"), .init("token", value: "TOKEN"),
        .init("server-pid", value: "PID"), .init("seed-locations", value: "N"), .init("seed-meals", value: "N"),
        .init("clean-up", value: "PREFIX"), .init("tls"), .init("ca", value: "FILE"), .init("server-name", value: "NAME"),
        .init("insecure-skip-verify"), .init("cert", value: "FILE"), .init("key", value: "FILE"),
    ]
}
