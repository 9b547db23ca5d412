import LarderWire

/// Parses `larder bench` flags (`--flag VALUE` or `--flag=VALUE`) into options.
public enum BenchArguments {
    /// What the command line asks for.
    public enum Invocation: Sendable, Equatable {
        case run(BenchOptions)
        case help
    }

    /// Parses `arguments` (without the program and subcommand names).
    /// `LARDER_SERVER` and `LARDER_TOKEN` in `environment` set defaults for `--server` and `--token`.
    /// - Throws: INVALID_ARGUMENT naming the flag, the value and the rule.
    public static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(RPCError) -> Invocation {
        var options = BenchOptions()
        if let server = environment["LARDER_SERVER"], !server.isEmpty {
            options.server = try BenchAddress(parsing: server)
        }
        if let token = environment["LARDER_TOKEN"], !token.isEmpty { options.token = token }
        var connectionsGiven = false
        var mixGiven = false
        var durationGiven = false
        var timeLimitGiven = false

        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" { return .help }
            guard argument.hasPrefix("--") else {
                throw .invalidArgument("unexpected argument \"\(argument)\"; flags start with --, see --help")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "json" {
                guard inlineValue == nil else { throw .invalidArgument("--json takes no value") }
                options.json = true
                continue
            }
            guard valueFlags.contains(name) else { throw .invalidArgument("unknown flag --\(name), see --help") }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw .invalidArgument("--\(name) needs a value, see --help") }
                value = arguments[index]
                index += 1
            }
            switch name {
            case "server": options.server = try BenchAddress(parsing: value)
            case "workload":
                guard let workload = Workload(rawValue: value) else {
                    throw .invalidArgument("--workload must be one of ping, get, create, list, mix; got \"\(value)\"")
                }
                options.workload = workload
            case "mix":
                options.mix = try WorkloadMix(parsing: value)
                mixGiven = true
            case "connections":
                options.connections = try integer(value, flag: name, range: 1...10_000)
                connectionsGiven = true
            case "concurrency": options.concurrency = try integer(value, flag: name, range: 1...100_000)
            case "threads": options.threads = try integer(value, flag: name, range: 1...64)
            case "duration":
                options.durationSeconds = try DurationText.seconds(value, flag: "--duration")
                guard options.durationSeconds > 0 else { throw .invalidArgument("--duration must be more than 0") }
                durationGiven = true
            case "requests": options.requests = try integer(value, flag: name, range: 1...1_000_000_000)
            case "warmup": options.warmupSeconds = try DurationText.seconds(value, flag: "--warmup")
            case "rate":
                guard let rate = Double(value), rate.isFinite, rate > 0, rate <= 10_000_000 else {
                    throw .invalidArgument("--rate must be calls per second, more than 0 and at most 10000000; got \"\(value)\"")
                }
                options.rate = rate
            case "time-limit":
                options.timeLimitSeconds = try DurationText.seconds(value, flag: "--time-limit")
                guard options.timeLimitSeconds > 0 else { throw .invalidArgument("--time-limit must be more than 0") }
                timeLimitGiven = true
            case "hist-out":
                guard !value.isEmpty else { throw .invalidArgument("--hist-out needs a file path") }
                options.histogramOutputPath = value
            case "token": options.token = value.isEmpty ? nil : value
            case "server-pid": options.serverPID = Int32(try integer(value, flag: name, range: 1...Int(Int32.max)))
            case "seed-locations": options.seedLocations = try integer(value, flag: name, range: 1...1_000_000)
            case "seed-meals": options.seedMeals = try integer(value, flag: name, range: 1...1_000_000)
            default: throw .invalidArgument("unknown flag --\(name), see --help")
            }
        }

        if options.workload == .mix {
            if !mixGiven { options.mix = .standard }
        } else {
            if mixGiven { throw .invalidArgument("--mix needs --workload mix") }
            options.mix = WorkloadMix(single: options.workload)
        }
        if options.requests != nil && durationGiven {
            throw .invalidArgument("give either --duration or --requests, not both")
        }
        if !connectionsGiven { options.connections = min(options.concurrency, 4) }
        options.connections = min(options.connections, options.concurrency)
        options.threads = min(options.threads, options.connections)
        if !timeLimitGiven && options.requests == nil {
            options.timeLimitSeconds = options.warmupSeconds + options.durationSeconds + 5
        }
        return .run(options)
    }

    /// The flags that take a value.
    private static let valueFlags: Set<String> = [
        "server", "workload", "mix", "connections", "concurrency", "threads", "duration", "requests", "warmup",
        "rate", "time-limit", "hist-out", "token", "server-pid", "seed-locations", "seed-meals",
    ]

    private static func integer(_ text: String, flag: String, range: ClosedRange<Int>) throws(RPCError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw .invalidArgument(
                "--\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound); got \"\(text)\"")
        }
        return value
    }
}
