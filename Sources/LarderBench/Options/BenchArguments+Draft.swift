import Foundation
import LarderClient
import LarderSystem
import LarderWire

extension BenchArguments {
    /// The options as the flags read so far set them, and what the checks across flags need to know:
    /// which flags were given and the values that only make sense together.
    struct Draft {
        var options = BenchOptions()
        var tlsWanted: Bool
        var tls = ClientTLS()
        /// The TLS flags given (as `--ca`), which need `--tls`.
        var tlsFlagsGiven: [String] = []
        var connectionsGiven = false
        var mixGiven = false
        var durationGiven = false
        var timeLimitGiven = false
        var workloadGiven = false
        /// `json` for `--json`, else the value of `--format`.
        var formatGiven: String?
        var callMethod: String?
        var callData: String?
        var scheduleKind: String?
        var loadStart: Double?
        var loadStep: Double?
        var loadStepSeconds: Double?
        var loadEnd: Double?
        var cleanUpPrefix: String?
        /// Every flag name given, in order, without the dashes.
        var flagsGiven: [String] = []

        /// The defaults `environment` sets (`LARDER_SERVER`, `LARDER_TOKEN`, `LARDER_TIMEOUT` and the TLS variables).
        /// - Throws: INVALID_ARGUMENT naming the variable.
        init(environment: [String: String]) throws(RPCError) {
            if let server = environment["LARDER_SERVER"], !server.isEmpty {
                options.server = try BenchAddress(parsing: server)
            }
            if let token = environment["LARDER_TOKEN"], !token.isEmpty { options.token = token }
            if let timeout = environment["LARDER_TIMEOUT"], !timeout.isEmpty {
                options.connectTimeoutSeconds = try Self.connectTimeout(timeout, flag: "LARDER_TIMEOUT")
            }
            tlsWanted = try Self.switchValue(environment["LARDER_TLS"], name: "LARDER_TLS") ?? false
            if let path = environment["LARDER_CA"], !path.isEmpty { tls.caFile = path }
            if let name = environment["LARDER_SERVER_NAME"], !name.isEmpty { tls.serverName = name }
            tls.insecureSkipVerify = try Self.switchValue(environment["LARDER_INSECURE_SKIP_VERIFY"],
                                                          name: "LARDER_INSECURE_SKIP_VERIFY") ?? false
            if let path = environment["LARDER_CERT"], !path.isEmpty { tls.certificateFile = path }
            if let path = environment["LARDER_KEY"], !path.isEmpty { tls.keyFile = path }
        }

        /// Applies a flag that takes no value: `--tls`, `--insecure-skip-verify`, `--json`, `--keep-data`.
        mutating func applySwitch(_ name: String) throws(RPCError) {
            switch name {
            case "tls": tlsWanted = true
            case "insecure-skip-verify":
                tls.insecureSkipVerify = true
                tlsFlagsGiven.append("--insecure-skip-verify")
            case "json":
                if let formatGiven, formatGiven != "json" {
                    throw .invalidArgument("--json is --format json; --format \(formatGiven) was given too")
                }
                formatGiven = "json"
                options.format = .json
            case "keep-data": options.keepData = true
            default: throw .invalidArgument("unknown flag --\(name), see --help")
            }
        }

        /// Applies `--name VALUE` through the handler of the flag's group.
        /// - Throws: INVALID_ARGUMENT naming the flag, the value and the rule.
        mutating func applyValueFlag(_ name: String, value: String) throws(RPCError) {
            if try applyConnectionFlag(name, value: value) { return }
            if try applyTLSFlag(name, value: value) { return }
            if try applyWorkloadFlag(name, value: value) { return }
            if try applyLoadFlag(name, value: value) { return }
            if try applyReportFlag(name, value: value) { return }
            throw .invalidArgument("unknown flag --\(name), see --help")
        }

        /// Where and how the load connects: `--server`, `--token`, `--protocol`, `--connections`, `--concurrency`,
        /// `--threads`, `--connect-timeout`. Returns false for any other flag.
        private mutating func applyConnectionFlag(_ name: String, value: String) throws(RPCError) -> Bool {
            switch name {
            case "server": options.server = try BenchAddress(parsing: value)
            case "token": options.token = value.isEmpty ? nil : value
            case "protocol":
                guard let transport = BenchTransport(rawValue: value) else {
                    throw .invalidArgument("--protocol must be lean or grpc; got \"\(value)\"")
                }
                options.transport = transport
            case "connections":
                options.connections = try Self.integer(value, flag: name, range: 1...10_000)
                connectionsGiven = true
            case "concurrency": options.concurrency = try Self.integer(value, flag: name, range: 1...100_000)
            case "threads": options.threads = try Self.integer(value, flag: name, range: 1...64)
            case "connect-timeout":
                options.connectTimeoutSeconds = try Self.connectTimeout(value, flag: "--connect-timeout")
            default: return false
            }
            return true
        }

        /// The TLS files and name: `--ca`, `--server-name`, `--cert`, `--key` (each needs `--tls`).
        /// Returns false for any other flag.
        private mutating func applyTLSFlag(_ name: String, value: String) throws(RPCError) -> Bool {
            guard ["ca", "server-name", "cert", "key"].contains(name) else { return false }
            guard !value.isEmpty else { throw .invalidArgument("--\(name) must not be empty") }
            switch name {
            case "ca": tls.caFile = value
            case "server-name": tls.serverName = value
            case "cert": tls.certificateFile = value
            default: tls.keyFile = value
            }
            tlsFlagsGiven.append("--\(name)")
            return true
        }

        /// What each call asks: `--workload`, `--mix`, `--call`, `--data` (`-d`), `--metadata` (`-m`),
        /// `--seed-locations`, `--seed-meals`. Returns false for any other flag.
        private mutating func applyWorkloadFlag(_ name: String, value: String) throws(RPCError) -> Bool {
            switch name {
            case "workload":
                guard let workload = Workload(rawValue: value) else {
                    throw .invalidArgument("--workload must be one of ping, get, create, list, mix; got \"\(value)\"")
                }
                guard workload != .call else { throw .invalidArgument("--workload call: use --call METHOD instead") }
                options.workload = workload
                workloadGiven = true
            case "mix":
                options.mix = try WorkloadMix(parsing: value)
                mixGiven = true
            case "call": callMethod = value
            case "data": callData = try Self.dataText(value)
            case "metadata": options.metadata += try MetadataEntry.parse(value)
            case "seed-locations": options.seedLocations = try Self.integer(value, flag: name, range: 1...1_000_000)
            case "seed-meals": options.seedMeals = try Self.integer(value, flag: name, range: 1...1_000_000)
            default: return false
            }
            return true
        }

        /// How long and how fast: `--duration`, `--requests`, `--warmup`, `--time-limit`, `--rate` and the
        /// `--load-*` flags (checked together later). Returns false for any other flag.
        private mutating func applyLoadFlag(_ name: String, value: String) throws(RPCError) -> Bool {
            switch name {
            case "duration":
                options.durationSeconds = try DurationText.seconds(value, flag: "--duration")
                guard options.durationSeconds > 0 else { throw .invalidArgument("--duration must be more than 0") }
                durationGiven = true
            case "requests": options.requests = try Self.integer(value, flag: name, range: 1...1_000_000_000)
            case "warmup": options.warmupSeconds = try DurationText.seconds(value, flag: "--warmup")
            case "time-limit":
                options.timeLimitSeconds = try DurationText.seconds(value, flag: "--time-limit")
                guard options.timeLimitSeconds > 0 else { throw .invalidArgument("--time-limit must be more than 0") }
                timeLimitGiven = true
            case "rate":
                guard let rate = Double(value), rate.isFinite, rate > 0, rate <= 10_000_000 else {
                    throw .invalidArgument("--rate must be calls per second, more than 0 and at most 10000000; got \"\(value)\"")
                }
                options.rate = rate
            case "load-schedule":
                guard ["const", "step", "line"].contains(value) else {
                    throw .invalidArgument("--load-schedule must be one of const, step, line; got \"\(value)\"")
                }
                scheduleKind = value
            case "load-start": loadStart = try Self.rate(value, flag: name)
            case "load-end": loadEnd = try Self.rate(value, flag: name)
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
            default: return false
            }
            return true
        }

        /// What is reported and kept: `--format`, `--output` (`-o`), `--hist-out`, `--server-pid`, `--clean-up`.
        /// Returns false for any other flag.
        private mutating func applyReportFlag(_ name: String, value: String) throws(RPCError) -> Bool {
            switch name {
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
            case "hist-out":
                guard !value.isEmpty else { throw .invalidArgument("--hist-out needs a file path") }
                options.histogramOutputPath = value
            case "server-pid": options.serverPID = Int32(try Self.integer(value, flag: name, range: 1...Int(Int32.max)))
            case "clean-up":
                guard value.hasPrefix(CreatedData.namePrefix) else {
                    throw .invalidArgument("--clean-up deletes only what the bench created: the prefix must start with "
                        + "\"\(CreatedData.namePrefix)\" (that alone deletes every run's data); got \"\(value)\"")
                }
                cleanUpPrefix = value
            default: return false
            }
            return true
        }
    }
}

extension BenchArguments.Draft {
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
        let bytes: [UInt8]
        do throws(FileContents.Failure) {
            bytes = try FileContents.read(path, maxBytes: 64 << 20)
        } catch {
            throw .invalidArgument("--data @\(path): cannot read that file (\(error.reason))")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidArgument("--data @\(path): the file is not valid UTF-8")
        }
        return text
    }

    /// A `--load-start` or `--load-end` rate: calls per second, more than 0 and at most 10000000.
    private static func rate(_ text: String, flag: String) throws(RPCError) -> Double {
        guard let rate = Double(text), rate.isFinite, rate > 0, rate <= 10_000_000 else {
            throw .invalidArgument("--\(flag) must be calls per second, more than 0 and at most 10000000; got \"\(text)\"")
        }
        return rate
    }

    /// An integer flag value within `range`.
    private static func integer(_ text: String, flag: String, range: ClosedRange<Int>) throws(RPCError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw .invalidArgument(
                "--\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound); got \"\(text)\"")
        }
        return value
    }
}
