import LarderBench
import LarderClient
import LarderWire

/// The `larder` command line, as a library: parse, run, print, exit status.
public enum LarderCommand {
    /// Runs `larder` with the raw bytes of `argv` after the program name and of its environment's
    /// `NAME=value` entries, writing to the process's stdout and stderr. An argument, or a variable
    /// larder reads (`ArgumentParser.environmentVariables`), that is not valid UTF-8 is a usage
    /// error (exit 2), never altered.
    /// - Returns: the exit status (see `ExitCode`).
    public static func main(rawArguments: [[UInt8]], rawEnvironment: [[UInt8]]) async -> Int32 {
        /// The refusal of `what`, whose byte at `offset` is `byte`.
        func notUTF8(_ what: String, offset: Int, byte: UInt8) -> Int32 {
            report(.usage("\(what) is not valid UTF-8 (byte \(offset) is 0x\(String(byte, radix: 16, uppercase: true))); "
                          + "larder sends text unchanged and will not guess its encoding", command: "larder"),
                   stderr: .standardError)
        }
        let environment: [String: String]
        switch UTF8Check.decodeEnvironment(rawEnvironment, checking: ArgumentParser.environmentVariables) {
        case .success(let decoded):
            environment = decoded
        case .failure(let bad):
            return notUTF8("environment variable \(bad.name)", offset: bad.offset, byte: bad.byte)
        }
        switch UTF8Check.decode(rawArguments) {
        case .success(let arguments):
            return await main(arguments: arguments, environment: environment)
        case .failure(let bad):
            return notUTF8("argument \(bad.index + 1)", offset: bad.offset, byte: bad.byte)
        }
    }

    /// Runs `larder` with `arguments` (without the program name), writing to the process's stdout and stderr.
    /// - Returns: the exit status (see `ExitCode`).
    public static func main(arguments: [String], environment: [String: String]) async -> Int32 {
        await run(arguments: arguments, environment: environment, stdout: .standardOutput, stderr: .standardError)
    }

    /// Runs `larder` with injectable output, for tests. `localTime` defaults to the zone of `TZ` in
    /// `environment`, else the machine's. Tables fit the terminal of `stdout`, else `COLUMNS`
    /// (not when `stdout` is a pipe or file; see `TerminalWidth`).
    public static func run(arguments: [String], environment: [String: String], stdout: OutputSink,
                           stderr: OutputSink, localTime: LocalTime? = nil) async -> Int32 {
        let status = await execute(arguments: arguments, environment: environment, stdout: stdout, stderr: stderr,
                                   localTime: localTime)
        // A script writing `larder --json … > file` must be able to tell a cut-off file. A
        // command that failed already keeps its own status.
        if let failure = stdout.writeFailure {
            stderr.write("larder: cannot write the output (\(failure)): what was written is incomplete\n")
            if status == ExitCode.success { return ExitCode.outputFailed }
        }
        return status
    }

    private static func execute(arguments: [String], environment: [String: String], stdout: OutputSink,
                                stderr: OutputSink, localTime: LocalTime?) async -> Int32 {
        let catalog = CommandCatalog.larder
        let outcome: ParseOutcome
        do {
            outcome = try ArgumentParser(catalog: catalog).parse(arguments, environment: environment)
        } catch {
            return report(error, stderr: stderr)
        }
        switch outcome {
        case .help(.command("bench")):
            return await BenchCommand.run(arguments: ["--help"], environment: environment)
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
            if localTime == nil, let warning = LocalTime.unknownZoneWarning(environment: environment) {
                stderr.write(warning)
            }
            let context = CommandContext(globals: globals, localTime: localTime ?? LocalTime(environment: environment),
                                         stdout: stdout, stderr: stderr, command: command.spec,
                                         terminalWidth: TerminalWidth.columns(of: stdout, environment: environment))
            if globals.output == .ids && !command.spec.printsIDs { return report(context.noIDs, stderr: stderr) }
            do {
                try await command.spec.run(command, context)
            } catch {
                let status = report(error, stderr: stderr)
                if case .rpc(let rpc) = error, rpc.code == .unauthenticated {
                    stderr.write(unauthenticatedHint(rpc.message, tokenGiven: globals.token != nil
                                                     || globals.metadata["authorization"] != nil))
                }
                if case .rpc(let rpc) = error, let hint = unknownOutcomeHint(rpc, command: command) {
                    stderr.write(hint)
                }
                return status
            }
            return context.exitStatus
        }
    }

    /// The line after an UNAUTHENTICATED error: how to give larder a token (the server's message
    /// names the metadata, which larder users do not write themselves).
    /// A refusal for TLS or a client certificate gets a hint about those, not about the token.
    static func unauthenticatedHint(_ message: String, tokenGiven: Bool) -> String {
        if message.contains("over TLS only") {
            return "hint: add --tls (with --ca FILE for a server whose certificate a private CA signed)\n"
        }
        if message.contains("certificate") {
            return "hint: pass --cert FILE --key FILE (or LARDER_CERT, LARDER_KEY): a certificate the server's client CA signed\n"
        }
        return tokenGiven
            ? "hint: the server refused the token larder sent (--token-file FILE, --token, LARDER_TOKEN, or -H 'authorization: Bearer …')\n"
            : "hint: pass --token-file FILE, --token, or set LARDER_TOKEN\n"
    }

    /// The line after a write that timed out, or whose connection ended after its request was
    /// sent (a server drain cut short, a crash): it may still be applied (the server runs a
    /// write it has taken, and commits one its deadline passed in), so a script that simply
    /// retries may make a duplicate (audit 27 M3, audit 35 M1). A connection that could not be
    /// made, or ended before the request was sent, gets no such line: nothing reached the server.
    static func unknownOutcomeHint(_ error: RPCError, command: ParsedCommand) -> String? {
        let sent = error.code == .deadlineExceeded || error.cause as? RequestDelivery == .sent
        guard sent, ["add", "update", "delete"].contains(command.spec.name) else { return nil }
        return "hint: the \(command.spec.path) may still have been applied: look before you try again"
            + (command.spec.name == "add" ? " (or give it an --id: a second add with the same id is ALREADY_EXISTS)\n" : "\n")
    }

    /// Prints `error` to stderr and returns its exit status. Control characters in the
    /// message are escaped (`\u{1B}`): it may hold what a server sent, and stderr is often a
    /// terminal. A usage message keeps its line breaks (a list of candidates); a server's
    /// message is one line.
    static func report(_ error: CLIError, stderr: OutputSink) -> Int32 {
        switch error {
        case .usage(let message, let command):
            // Cut as a server's message is: it may quote a value of any size the user gave (audit 35 L3).
            let shown = message.utf8.count > SafeText.maxMessageBytes
                ? "\(SafeText.head(of: message))… (\(message.utf8.count) bytes in all)" : message
            stderr.write(TerminalText.lines("larder: \(shown)\nRun '\(command) --help' for usage.\n"))
        case .rpc(let rpc):
            stderr.write("\(SafeText.message(rpc.description))\n")
        }
        return ExitCode.forError(error)
    }
}
