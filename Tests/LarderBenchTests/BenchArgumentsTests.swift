import LarderClient
import LarderWire
import Testing
@testable import LarderBench

@Suite("BenchArguments")
struct BenchArgumentsTests {
    static func options(_ arguments: [String], environment: [String: String] = [:]) throws -> BenchOptions {
        guard case .run(let options) = try BenchArguments.parse(arguments, environment: environment) else {
            throw RPCError(.internal, "expected a run")
        }
        return options
    }

    @Test(arguments: [("10s", 10.0), ("500ms", 0.5), ("2m", 120), ("1.5s", 1.5), ("250us", 0.000_25), ("1h", 3600),
                      ("7", 7), ("0s", 0)])
    func durations(text: String, seconds: Double) throws {
        #expect(try DurationText.seconds(text, flag: "--duration") == seconds)
    }

    @Test(arguments: ["25h", "99999999999999s", "9223372036854775807ms", "1e300s"])
    func durationsOverADayAreRefused(text: String) throws {
        #expect(throws: RPCError.self) { try DurationText.seconds(text, flag: "--duration") }
        #expect(try DurationText.seconds("24h", flag: "--duration") == 86_400)
    }

    @Test(arguments: ["", "ten", "-1s", "5x", "1.2.3s", "s", "1 s"])
    func badDurationsNameTheFlagAndTheText(text: String) {
        #expect {
            try DurationText.seconds(text, flag: "--warmup")
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .invalidArgument && error?.message.contains("--warmup") == true
                && error?.message.contains("\"\(text)\"") == true
        }
    }

    @Test func connectTimeoutFromTheFlagOrLarderTimeoutAndMoreThanZero() throws {
        #expect(try Self.options([]).connectTimeoutSeconds == 10)
        #expect(try Self.options([], environment: ["LARDER_TIMEOUT": "30s"]).connectTimeoutSeconds == 30)
        #expect(try Self.options(["--connect-timeout", "500ms"],
                                 environment: ["LARDER_TIMEOUT": "30s"]).connectTimeoutSeconds == 0.5)
        for (arguments, environment, named) in [(["--connect-timeout", "0s"], [:], "--connect-timeout"),
                                                (["--connect-timeout=soon"], [:], "--connect-timeout"),
                                                ([], ["LARDER_TIMEOUT": "-1s"], "LARDER_TIMEOUT")] {
            #expect {
                try Self.options(arguments, environment: environment)
            } throws: { error in
                (error as? RPCError)?.code == .invalidArgument && (error as? RPCError)?.message.contains(named) == true
            }
        }
    }

    @Test func protocolIsLeanByDefaultOrGRPC() throws {
        #expect(try Self.options([]).transport == .lean)
        #expect(try Self.options(["--protocol", "grpc"]).transport == .grpc)
        #expect(try Self.options(["--protocol=lean"]).transport == .lean)
        #expect {
            try Self.options(["--protocol", "h2"])
        } throws: { error in
            (error as? RPCError)?.message == "--protocol must be lean or grpc; got \"h2\""
        }
    }

    @Test func tlsFromFlagsOrTheEnvironmentAndNeverImplied() throws {
        #expect(try Self.options([]).tls == nil)
        #expect(try Self.options(["--tls"]).tls == ClientTLS())
        #expect(try Self.options(["--tls", "--ca", "ca.pem", "--server-name", "db.example", "--cert", "c.pem",
                                  "--key", "c.key"]).tls
                == ClientTLS(caFile: "ca.pem", serverName: "db.example", certificateFile: "c.pem", keyFile: "c.key"))
        let environment = ["LARDER_TLS": "1", "LARDER_CA": "env.pem", "LARDER_INSECURE_SKIP_VERIFY": "yes",
                           "LARDER_CERT": "e.pem", "LARDER_KEY": "e.key"]
        #expect(try Self.options([], environment: environment).tls
                == ClientTLS(caFile: "env.pem", insecureSkipVerify: true, certificateFile: "e.pem", keyFile: "e.key"))
        #expect(try Self.options(["--ca", "flag.pem"], environment: environment).tls?.caFile == "flag.pem")
        #expect(try Self.options([], environment: ["LARDER_CA": "env.pem"]).tls == nil)
        let refusals: [([String], [String: String], String)] = [
            (["--ca", "ca.pem"], [:], "--ca applies to TLS connections: add --tls"),
            (["--insecure-skip-verify"], [:], "--insecure-skip-verify applies to TLS connections: add --tls"),
            (["--tls", "--cert", "c.pem"], [:], "a client certificate needs both --cert FILE and --key FILE"),
            (["--tls=yes"], [:], "--tls takes no value"),
            ([], ["LARDER_TLS": "maybe"], "LARDER_TLS must be 1, true, yes or on (or 0, false, no or off), got \"maybe\""),
        ]
        for (arguments, environment, message) in refusals {
            #expect {
                try Self.options(arguments, environment: environment)
            } throws: { error in
                (error as? RPCError)?.message.hasPrefix(message) == true
            }
        }
    }

    @Test func defaults() throws {
        let options = try Self.options([])
        #expect(options.server == BenchAddress(host: "127.0.0.1", port: 7411))
        #expect(options.workload == .ping)
        #expect(options.concurrency == 64)
        #expect(options.connections == 4)
        #expect(options.durationSeconds == 10)
        #expect(options.warmupSeconds == 1)
        #expect(options.requests == nil && options.rate == nil)
        #expect(options.timeLimitSeconds == 16)
    }

    @Test func everyFlag() throws {
        let options = try Self.options([
            "--server", "10.0.0.2:9000", "--workload=get", "--connections", "2", "--concurrency", "16",
            "--threads", "2", "--duration", "2m", "--warmup", "500ms", "--rate", "2500", "--json",
            "--hist-out", "/tmp/h.txt", "--token", "secret", "--server-pid", "42",
        ])
        #expect(options.server == BenchAddress(host: "10.0.0.2", port: 9000))
        #expect(options.workload == .get)
        #expect(options.mix == WorkloadMix(single: .get))
        #expect(options.connections == 2 && options.concurrency == 16 && options.threads == 2)
        #expect(options.durationSeconds == 120 && options.warmupSeconds == 0.5)
        #expect(options.rate == 2500)
        #expect(options.json)
        #expect(options.histogramOutputPath == "/tmp/h.txt")
        #expect(options.token == "secret")
        #expect(options.serverPID == 42)
    }

    @Test func connectionsDefaultToMinOfConcurrencyAndFourAndNeverExceedIt() throws {
        #expect(try Self.options(["--concurrency", "1"]).connections == 1)
        #expect(try Self.options(["--concurrency", "3"]).connections == 3)
        #expect(try Self.options(["--concurrency", "100"]).connections == 4)
        #expect(try Self.options(["--concurrency", "2", "--connections", "8"]).connections == 2)
        #expect(try Self.options(["--concurrency", "2", "--connections", "2", "--threads", "5"]).threads == 2)
    }

    @Test func environmentSetsServerAndTokenAndFlagsWin() throws {
        let environment = ["LARDER_SERVER": "127.0.0.1:9999", "LARDER_TOKEN": "t0"]
        let fromEnvironment = try Self.options([], environment: environment)
        #expect(fromEnvironment.server.port == 9999)
        #expect(fromEnvironment.token == "t0")
        let fromFlag = try Self.options(["--server", "[::1]:7000"], environment: environment)
        #expect(fromFlag.server == BenchAddress(host: "::1", port: 7000))
    }

    @Test func requestsRunHasAOneMinuteCapUnlessGiven() throws {
        let options = try Self.options(["--requests", "500"])
        #expect(options.requests == 500)
        #expect(options.timeLimitSeconds == 60)
        #expect(try Self.options(["--requests", "5", "--time-limit", "3s"]).timeLimitSeconds == 3)
        // A run by duration needs a moment after its window for the calls then in flight.
        #expect(try Self.options(["--duration", "2s", "--time-limit", "3500ms"]).timeLimitSeconds == 3.5)
    }

    @Test func mixWeights() throws {
        let options = try Self.options(["--workload", "mix", "--mix", "get=80,create=15,list=5"])
        #expect(options.mix.description == "get=80,create=15,list=5")
        #expect(options.mix.totalWeight == 100)
        #expect(try Self.options(["--workload", "mix"]).mix == .standard)
        let zeroDropped = try WorkloadMix(parsing: "ping=0,list=3")
        #expect(zeroDropped.workloads == [.list])
    }

    @Test(arguments: [
        ("get=80,create", "no '='"), ("get=x", "weight of get"), ("fetch=1", "unknown workload \"fetch\""),
        ("mix=1", "unknown workload \"mix\""), ("get=1,get=2", "names get twice"), ("get=0", "at least one positive"),
        ("get=-1", "weight of get"),
    ])
    func badMixes(text: String, fragment: String) {
        #expect {
            try WorkloadMix(parsing: text)
        } throws: { error in
            (error as? RPCError)?.message.contains(fragment) == true
        }
    }

    @Test(arguments: [
        (["--bogus"], "unknown flag --bogus"),
        (["--concurrency"], "--concurrency needs a value"),
        (["--concurrency", "0"], "--concurrency must be an integer from 1"),
        (["--workload", "delete"], "--workload must be one of"),
        (["--duration", "5s", "--requests", "10"], "either --duration or --requests"),
        (["--mix", "get=1"], "--mix needs --workload mix"),
        (["--rate", "-5"], "--rate must be calls per second"),
        (["--server", "localhost"], "has no port"),
        (["--server", "127.0.0.1:70000"], "invalid port"),
        (["--duration", "0s"], "--duration must be more than 0"),
        (["get"], "unexpected argument \"get\""),
        (["--json=yes"], "--json takes no value"),
        (["--duration", "10s", "--time-limit", "5s"], "--time-limit 5s is not longer than the run it bounds (--warmup 1s + --duration 10s)"),
        (["--warmup", "3s", "--duration", "2s", "--time-limit", "4s"], "--time-limit 4s is not longer"),
        (["--duration", "2s", "--time-limit", "3s"], "--time-limit 3s is not longer"),
    ])
    func badArguments(arguments: [String], fragment: String) {
        #expect {
            try BenchArguments.parse(arguments)
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .invalidArgument && error?.message.contains(fragment) == true
        }
    }

    @Test func helpWins() throws {
        #expect(try BenchArguments.parse(["--concurrency", "8", "--help"]) == .help)
        #expect(try BenchArguments.parse(["-h"]) == .help)
        #expect(BenchHelp.text.contains("bench_cpu_us_per_call"))
    }
}

@Suite("BenchArguments: --call, formats, schedules, data")
struct BenchArgumentsNewFlagsTests {
    static func options(_ arguments: [String]) throws -> BenchOptions { try BenchArgumentsTests.options(arguments) }

    @Test func callDataAndMetadata() throws {
        let options = try Self.options([
            "--call", "larder.v1.LocationService/GetLocation", "-d", #"{"id": "{{randomLocationID}}"}"#,
            "-m", #"{"x-a": "1", "X-B": "two"}"#, "--metadata", "x-c: three", "-m=x-d=4",
        ])
        #expect(options.workload == .call)
        #expect(options.call?.path == "/larder.v1.LocationService/GetLocation")
        #expect(options.call?.template.usesLocationIDs == true)
        #expect(options.metadata == [MetadataEntry(key: "x-a", value: "1"), MetadataEntry(key: "x-b", value: "two"),
                                     MetadataEntry(key: "x-c", value: "three"), MetadataEntry(key: "x-d", value: "4")])
        #expect(try Self.options(["--call", "larder.v1.LocationService.ListLocations"]).call?.path
            == "/larder.v1.LocationService/ListLocations")
    }

    @Test func formatsAndOutput() throws {
        #expect(try Self.options(["--format", "html", "-o", "/tmp/r.html"]).format == .html)
        #expect(try Self.options(["--format=csv"]).outputPath == nil)
        #expect(try Self.options(["--json", "--format", "json"]).format == .json)
        #expect(try Self.options(["--keep-data"]).keepData)
        #expect(try !Self.options([]).keepData)
    }

    @Test func schedules() throws {
        let step = try Self.options(["--load-schedule", "step", "--load-start", "100", "--load-step", "50",
                                     "--load-step-duration", "2s", "--load-end", "300"])
        #expect(step.schedule == LoadSchedule(kind: .step, start: 100, step: 50, stepSeconds: 2, end: 300))
        #expect(step.isOpenLoop && step.rate == nil)
        // The ramp takes 8 s to reach 300, then one more step: 10 s measured, 16 s cap.
        #expect(step.durationSeconds == 10 && step.timeLimitSeconds == 16)
        let line = try Self.options(["--load-schedule", "line", "--load-start", "10", "--load-step", "5",
                                     "--duration", "3s"])
        #expect(line.schedule?.kind == .line && line.schedule?.stepSeconds == 1 && line.durationSeconds == 3)
        #expect(try Self.options(["--load-schedule", "const", "--rate", "500"]).rate == 500)
    }

    @Test func cleanUpMode() throws {
        guard case .cleanUp(let options, let prefix) = try BenchArguments.parse(
            ["--server", "127.0.0.1:9", "--clean-up", "larder-bench-abc123"]) else {
            Issue.record("expected --clean-up")
            return
        }
        #expect(prefix == "larder-bench-abc123" && options.server.port == 9)
        // What the clean-up uses is accepted with it: the server's address, auth and TLS.
        guard case .cleanUp(let secured, _) = try BenchArguments.parse(
            ["--clean-up", "larder-bench-", "--token", "t", "--metadata", "k: v", "--connect-timeout", "2s",
             "--tls", "--insecure-skip-verify"]) else {
            Issue.record("expected --clean-up")
            return
        }
        #expect(secured.token == "t" && secured.tls?.insecureSkipVerify == true && secured.connectTimeoutSeconds == 2)
    }

    @Test(arguments: [
        (["--call", "/larder.v1.LocationService/Nope"], "LocationService has CreateLocation"),
        (["--call", "/nope.Service/X"], "expected /package.Service/Method"),
        (["--call", "/larder.v1.LocationService/GetLocation", "--workload", "get"], "either --call or --workload"),
        (["-d", "{}"], "--data needs --call"),
        (["--call", "/larder.v1.LocationService/GetLocation", "-d", "{\"idd\": 1}"], "--data for larder.v1.GetLocationRequest"),
        (["--call", "/larder.v1.LocationService/GetLocation", "-d", "@/nonexistent/file"], "cannot read that file"),
        (["--workload", "call"], "use --call METHOD"),
        (["--metadata", "novalue"], "has no ':' or '='"),
        (["--metadata", "bad key: v"], "must be letters, digits"),
        (["--metadata", "{\"a\": 1}"], "must be a string"),
        (["--format", "xml"], "--format must be one of text, json, csv, html"),
        (["--format", "csv", "--json"], "--json is --format json"),
        (["--load-schedule", "ramp"], "--load-schedule must be one of const, step, line"),
        (["--load-schedule", "step", "--load-start", "10"], "needs --load-start R and --load-step R"),
        (["--load-schedule", "step", "--load-start", "10", "--load-step", "0"], "not 0"),
        (["--load-schedule", "step", "--load-start", "10", "--load-step", "-5"], "needs --load-end"),
        (["--load-schedule", "step", "--load-start", "100", "--load-step", "5", "--load-end", "50"], "the other way"),
        (["--load-schedule", "line", "--load-start", "10", "--load-step", "5", "--rate", "9"], "--rate is a constant rate"),
        (["--load-start", "10"], "need --load-schedule step or line"),
        (["--load-schedule", "const"], "--load-schedule const needs --rate"),
        (["--load-schedule", "step", "--load-start", "1", "--load-step", "1", "--load-end", "5000",
          "--load-step-duration", "10ms"], "at most 1000"),
        (["--clean-up", "Kitchen"], "must start with \"larder-bench-\""),
        (["--clean-up", "larder-bench-", "--concurrency", "5"], "--concurrency does not apply to it"),
        (["--json", "--clean-up", "larder-bench-"], "--json does not apply to it"),
        (["--keep-data=yes"], "--keep-data takes no value"),
    ] as [([String], String)])
    func badNewFlagsNameTheProblem(arguments: [String], message: String) {
        #expect {
            try BenchArguments.parse(arguments)
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .invalidArgument && error?.message.contains(message) == true
        }
    }

    @Test("bench's flags for completion are the ones --help documents and the parser takes")
    func benchFlagsMatchItsHelp() throws {
        for flag in BenchFlag.all {
            #expect(BenchHelp.text.contains("--\(flag.name)"), "--\(flag.name) is in bench --help")
            if let short = flag.short {
                #expect(BenchHelp.text.contains("-\(short), --\(flag.name)") || BenchHelp.text.contains("-\(short)/--\(flag.name)"))
            }
            let argument = flag.takesValue ? ["--\(flag.name)", flag.choices.first ?? "1"] : ["--\(flag.name)"]
            do {
                _ = try BenchArguments.parse(argument)
            } catch {
                #expect(!error.message.contains("unknown flag"), "\(error.message)")
            }
        }
        let documented = Set(BenchHelp.text.matches(of: /--([a-z][a-z-]+)/).map { String($0.1) })
        // Named there but not bench's: larder's global --timeout, the server's --tls-client-ca, and
        // --token-file, which larder reads and passes on as --token.
        let others: Set = ["timeout", "tls-client-ca", "token-file"]
        #expect(documented.subtracting(BenchFlag.all.map(\.name)) == others)
    }
}
