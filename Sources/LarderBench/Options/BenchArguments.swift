import Foundation
import LarderClient
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
        var options = BenchOptions()
        if let server = environment["LARDER_SERVER"], !server.isEmpty {
            options.server = try BenchAddress(parsing: server)
        }
        if let token = environment["LARDER_TOKEN"], !token.isEmpty { options.token = token }
        if let timeout = environment["LARDER_TIMEOUT"], !timeout.isEmpty {
            options.connectTimeoutSeconds = try connectTimeout(timeout, flag: "LARDER_TIMEOUT")
        }
        var tlsWanted = try switchValue(environment["LARDER_TLS"], name: "LARDER_TLS") ?? false
        var tls = ClientTLS()
        var tlsFlagsGiven: [String] = []
        if let path = environment["LARDER_CA"], !path.isEmpty { tls.caFile = path }
        if let name = environment["LARDER_SERVER_NAME"], !name.isEmpty { tls.serverName = name }
        tls.insecureSkipVerify = try switchValue(environment["LARDER_INSECURE_SKIP_VERIFY"],
                                                 name: "LARDER_INSECURE_SKIP_VERIFY") ?? false
        if let path = environment["LARDER_CERT"], !path.isEmpty { tls.certificateFile = path }
        if let path = environment["LARDER_KEY"], !path.isEmpty { tls.keyFile = path }
        var connectionsGiven = false
        var mixGiven = false
        var durationGiven = false
        var timeLimitGiven = false
        var workloadGiven = false
        var formatGiven: String?
        var callMethod: String?
        var callData: String?
        var scheduleKind: String?
        var loadStart: Double?
        var loadStep: Double?
        var loadStepSeconds: Double?
        var loadEnd: Double?
        var cleanUpPrefix: String?
        var flagsGiven: [String] = []

        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" { return .help }
            let shortNames = ["-d": "data", "-m": "metadata", "-o": "output"]
            var name: String
            if let long = shortNames[String(argument.prefix(2))], argument.count == 2 || argument.dropFirst(2).first == "=" {
                name = long + argument.dropFirst(2)
            } else {
                guard argument.hasPrefix("--") else {
                    throw .invalidArgument("unexpected argument \"\(argument)\"; flags start with --, see --help")
                }
                name = String(argument.dropFirst(2))
            }
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            flagsGiven.append(name)
            if name == "tls" || name == "insecure-skip-verify" {
                guard inlineValue == nil else { throw .invalidArgument("--\(name) takes no value") }
                if name == "tls" {
                    tlsWanted = true
                } else {
                    tls.insecureSkipVerify = true
                    tlsFlagsGiven.append("--insecure-skip-verify")
                }
                continue
            }
            if name == "json" || name == "keep-data" {
                guard inlineValue == nil else { throw .invalidArgument("--\(name) takes no value") }
                if name == "json" {
                    if let formatGiven, formatGiven != "json" {
                        throw .invalidArgument("--json is --format json; --format \(formatGiven) was given too")
                    }
                    formatGiven = "json"
                    options.format = .json
                } else {
                    options.keepData = true
                }
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
                guard workload != .call else { throw .invalidArgument("--workload call: use --call METHOD instead") }
                options.workload = workload
                workloadGiven = true
            case "protocol":
                guard let transport = BenchTransport(rawValue: value) else {
                    throw .invalidArgument("--protocol must be lean or grpc; got \"\(value)\"")
                }
                options.transport = transport
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
            case "connect-timeout":
                options.connectTimeoutSeconds = try connectTimeout(value, flag: "--connect-timeout")
            case "hist-out":
                guard !value.isEmpty else { throw .invalidArgument("--hist-out needs a file path") }
                options.histogramOutputPath = value
            case "token": options.token = value.isEmpty ? nil : value
            case "ca", "server-name", "cert", "key":
                guard !value.isEmpty else { throw .invalidArgument("--\(name) must not be empty") }
                switch name {
                case "ca": tls.caFile = value
                case "server-name": tls.serverName = value
                case "cert": tls.certificateFile = value
                default: tls.keyFile = value
                }
                tlsFlagsGiven.append("--\(name)")
            case "server-pid": options.serverPID = Int32(try integer(value, flag: name, range: 1...Int(Int32.max)))
            case "seed-locations": options.seedLocations = try integer(value, flag: name, range: 1...1_000_000)
            case "seed-meals": options.seedMeals = try integer(value, flag: name, range: 1...1_000_000)
            case "call": callMethod = value
            case "data": callData = try dataText(value)
            case "metadata": options.metadata += try MetadataEntry.parse(value)
            case "format":
                guard let format = ReportFormat(rawValue: value) else {
                    throw .invalidArgument("--format must be one of text, json, csv, html; got \"\(value)\"")
                }
                if let formatGiven, formatGiven != value {
                    throw .invalidArgument("--format \(value) and --\(formatGiven == "json" ? "json" : "format " + formatGiven) disagree")
                }
                formatGiven = value
                options.format = format
            case "output":
                guard !value.isEmpty else { throw .invalidArgument("--output needs a file path") }
                options.outputPath = value
            case "load-schedule":
                guard ["const", "step", "line"].contains(value) else {
                    throw .invalidArgument("--load-schedule must be one of const, step, line; got \"\(value)\"")
                }
                scheduleKind = value
            case "load-start": loadStart = try rate(value, flag: name)
            case "load-end": loadEnd = try rate(value, flag: name)
            case "load-step":
                guard let step = Double(value), step.isFinite, step != 0, abs(step) <= 10_000_000 else {
                    throw .invalidArgument("--load-step must be calls per second to add per step, not 0 (negative ramps down); got \"\(value)\"")
                }
                loadStep = step
            case "load-step-duration":
                loadStepSeconds = try DurationText.seconds(value, flag: "--load-step-duration")
                guard let seconds = loadStepSeconds, seconds >= 0.01 else {
                    throw .invalidArgument("--load-step-duration must be at least 10ms")
                }
            case "clean-up":
                guard value.hasPrefix(CreatedData.namePrefix) else {
                    throw .invalidArgument("--clean-up deletes only what the bench created: the prefix must start with "
                        + "\"\(CreatedData.namePrefix)\" (that alone deletes every run's data); got \"\(value)\"")
                }
                cleanUpPrefix = value
            default: throw .invalidArgument("unknown flag --\(name), see --help")
            }
        }

        if tlsWanted {
            guard (tls.certificateFile == nil) == (tls.keyFile == nil) else {
                throw .invalidArgument("a client certificate needs both --cert FILE and --key FILE (or LARDER_CERT and LARDER_KEY)")
            }
            options.tls = tls
        } else if let flag = tlsFlagsGiven.first {
            throw .invalidArgument("\(flag) applies to TLS connections: add --tls")
        }
        if let cleanUpPrefix {
            if let ignored = flagsGiven.first(where: { !cleanUpFlags.contains($0) }) {
                throw .invalidArgument("--clean-up runs no load: --\(ignored) does not apply to it (it takes --server, "
                    + "--token, --metadata, --connect-timeout and the TLS flags)")
            }
            return .cleanUp(options, prefix: cleanUpPrefix)
        }
        if let callMethod {
            guard !workloadGiven else { throw .invalidArgument("give either --call or --workload, not both") }
            guard !mixGiven else { throw .invalidArgument("--mix needs --workload mix, not --call") }
            options.call = try CallSpec(method: callMethod, data: callData ?? "{}")
            options.workload = .call
        } else if callData != nil {
            throw .invalidArgument("--data needs --call METHOD")
        }
        try applySchedule(&options, kind: scheduleKind, start: loadStart, step: loadStep, stepSeconds: loadStepSeconds,
                          end: loadEnd)
        if let schedule = options.schedule, !durationGiven, options.requests == nil {
            options.durationSeconds = schedule.defaultDurationSeconds
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
        "server", "workload", "protocol", "mix", "connections", "concurrency", "threads", "duration", "requests", "warmup",
        "rate", "time-limit", "connect-timeout", "hist-out", "token", "server-pid", "seed-locations", "seed-meals",
        "call", "data", "metadata", "format", "output", "load-schedule", "load-start", "load-step",
        "load-step-duration", "load-end", "clean-up", "ca", "server-name", "cert", "key",
    ]

    /// The flags `--clean-up` uses; any other given with it is a usage error rather than silently ignored.
    private static let cleanUpFlags: Set<String> = [
        "clean-up", "server", "token", "metadata", "connect-timeout", "tls", "ca", "server-name", "cert", "key",
        "insecure-skip-verify",
    ]

    /// A connect timeout: a duration more than 0.
    private static func connectTimeout(_ text: String, flag: String) throws(RPCError) -> Double {
        let seconds = try DurationText.seconds(text, flag: flag)
        guard seconds > 0 else { throw .invalidArgument("\(flag) must be more than 0, got \"\(text)\"") }
        return seconds
    }

    /// `LARDER_TLS=1` and the like: 1/true/yes/on or 0/false/no/off; nil when unset or empty.
    private static func switchValue(_ value: String?, name: String) throws(RPCError) -> Bool? {
        guard let value, !value.isEmpty else { return nil }
        guard let on = SwitchText.value(value) else { throw .invalidArgument(SwitchText.refusal(value, name: name)) }
        return on
    }

    /// `--data` text: the JSON itself, or `@FILE` for a file's contents.
    private static func dataText(_ value: String) throws(RPCError) -> String {
        guard value.hasPrefix("@") else { return value }
        let path = String(value.dropFirst())
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .invalidArgument("--data @\(path): cannot read that file")
        }
        return text
    }

    private static func rate(_ text: String, flag: String) throws(RPCError) -> Double {
        guard let rate = Double(text), rate.isFinite, rate > 0, rate <= 10_000_000 else {
            throw .invalidArgument("--\(flag) must be calls per second, more than 0 and at most 10000000; got \"\(text)\"")
        }
        return rate
    }

    /// Checks the `--load-*` flags together and sets `options.schedule` (or `rate` for `const`).
    private static func applySchedule(_ options: inout BenchOptions, kind: String?, start: Double?, step: Double?,
                                      stepSeconds: Double?, end: Double?) throws(RPCError)
    {
        guard let kind else {
            if start != nil || step != nil || stepSeconds != nil || end != nil {
                throw .invalidArgument("--load-start, --load-step, --load-step-duration and --load-end need --load-schedule step or line")
            }
            return
        }
        if kind == "const" {
            guard step == nil, stepSeconds == nil, end == nil else {
                throw .invalidArgument("--load-schedule const takes only --rate (or --load-start)")
            }
            guard let rate = options.rate ?? start else { throw .invalidArgument("--load-schedule const needs --rate") }
            options.rate = rate
            return
        }
        guard options.rate == nil else {
            throw .invalidArgument("--rate is a constant rate; --load-schedule \(kind) starts at --load-start instead")
        }
        guard let start, let step else {
            throw .invalidArgument("--load-schedule \(kind) needs --load-start R and --load-step R (see --help)")
        }
        if let end, step > 0 ? end < start : end > start {
            throw .invalidArgument("--load-end \(Format.compact(end)) lies the other way from --load-start \(Format.compact(start)) for --load-step \(Format.compact(step))")
        }
        if step < 0 && end == nil { throw .invalidArgument("a negative --load-step needs --load-end (the lowest rate)") }
        let schedule = LoadSchedule(kind: kind == "step" ? .step : .line, start: start, step: step,
                                    stepSeconds: stepSeconds ?? 1, end: end)
        if let ramp = schedule.rampSeconds, ramp / schedule.stepSeconds > 1000 {
            throw .invalidArgument("--load-schedule \(kind) would take \(Int(ramp / schedule.stepSeconds)) steps; at most 1000")
        }
        options.schedule = schedule
    }

    private static func integer(_ text: String, flag: String, range: ClosedRange<Int>) throws(RPCError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw .invalidArgument(
                "--\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound); got \"\(text)\"")
        }
        return value
    }
}
