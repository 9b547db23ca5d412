import LarderBench
import LarderWire

/// The `larder` command line, as a library: parse, run, print, exit status.
public enum LarderCommand {
    /// Runs `larder` with `arguments` (without the program name), writing to the process's stdout and stderr.
    /// - Returns: the exit status (see `ExitCode`).
    public static func main(arguments: [String], environment: [String: String]) async -> Int32 {
        await run(arguments: arguments, environment: environment, stdout: .standardOutput, stderr: .standardError)
    }

    /// Runs `larder` with injectable output, for tests. `localTime` defaults to the zone of `TZ` in
    /// `environment`, else the machine's.
    public static func run(arguments: [String], environment: [String: String], stdout: OutputSink,
                           stderr: OutputSink, localTime: LocalTime? = nil) async -> Int32 {
        let catalog = CommandCatalog.larder
        let outcome: ParseOutcome
        do {
            outcome = try ArgumentParser(catalog: catalog).parse(arguments, environment: environment)
        } catch {
            return report(error, stderr: stderr)
        }
        switch outcome {
        case .help(let topic):
            stdout.write(catalog.usage(topic))
            return ExitCode.success
        case .version:
            stdout.write("larder \(BuildInfo.summary)\n")
            return ExitCode.success
        case .bench(let benchArguments, let globals, let serverText, let token):
            // Global options given before `bench` reach it as the defaults it already reads.
            var benchEnvironment = environment
            if let serverText { benchEnvironment["LARDER_SERVER"] = serverText }
            if let token { benchEnvironment["LARDER_TOKEN"] = token }
            let arguments = (globals.json && !benchArguments.contains("--json") ? ["--json"] : []) + benchArguments
            return await BenchCommand.run(arguments: arguments, environment: benchEnvironment)
        case .run(let command, let globals):
            let context = CommandContext(globals: globals, localTime: localTime ?? LocalTime(environment: environment),
                                         stdout: stdout)
            do {
                try await command.spec.run(command, context)
            } catch {
                return report(error, stderr: stderr)
            }
            return context.exitStatus
        }
    }

    /// Prints `error` to stderr and returns its exit status.
    static func report(_ error: CLIError, stderr: OutputSink) -> Int32 {
        switch error {
        case .usage(let message, let command):
            stderr.write("larder: \(message)\nRun '\(command) --help' for usage.\n")
        case .rpc(let rpc):
            stderr.write("\(rpc.description)\n")
        }
        return ExitCode.forError(error)
    }
}
