import Dispatch
import Foundation
import LarderClient
import LarderSystem
import LarderWire

/// `larder bench`: the entry point the CLI calls.
public enum BenchCommand {
    /// Parses `arguments` (after `bench`), runs the load, deletes what it created,
    /// writes the report to stdout or `--output` and notices to stderr.
    /// The first Ctrl-C ends the load early and still deletes the data; a second one
    /// quits at once and says what was left and how to delete it.
    /// - Returns: the exit status (see `--help`).
    public static func run(arguments: [String], environment: [String: String]) async -> Int32 {
        let invocation: BenchArguments.Invocation
        do throws(RPCError) {
            invocation = try BenchArguments.parse(arguments, environment: environment)
        } catch {
            StandardError.write("larder bench: \(error.message)\n")
            return BenchExitStatus.usage
        }
        switch invocation {
        case .help:
            print(BenchHelp.text)
            return 0
        case .cleanUp(let options, let prefix):
            return cleanUp(options, prefix: prefix)
        case .run(let options):
            return await runLoad(options)
        }
    }

    /// Runs the load `options` describes, once its files and `--server-pid` check out, with Ctrl-C and
    /// SIGTERM handled as `run` says; then writes the report and the notices after it.
    /// - Returns: the exit status.
    private static func runLoad(_ options: BenchOptions) async -> Int32 {
        guard canStart(options) else { return BenchExitStatus.usage }
        if let warning = ServerAddress(host: options.server.host, port: options.server.port)
            .clearTextTokenWarning(hasToken: options.token != nil, tls: options.tls != nil) {
            StandardError.write(warning)
        }
        if options.tls?.insecureSkipVerify == true {
            StandardError.write("warning: --insecure-skip-verify: the server's certificate is not checked; anyone on the path "
                                + "can impersonate \(options.server) and read the token and data\n")
        }
        let cancellation = BenchCancellation()
        let data = CreatedData()
        let interrupts = InterruptHandler(cancellation: cancellation) { [options] in
            StandardError.write(quittingNotice(options, data: data))
        }
        defer { interrupts.stop() }
        let result: BenchResult
        do throws(RPCError) {
            result = try await BenchRunner.run(options, showProgress: StandardError.isInteractive,
                                               cancellation: cancellation, data: data) { notice in
                StandardError.write("larder bench: \(notice)\n")
            }
        } catch {
            StandardError.write("larder bench: \(SafeText.escaped(error.description))\n")
            return cancellation.isCancelled ? interrupts.exitStatus : BenchExitStatus.couldNotStart
        }
        let reportWritten = writeReports(result, options)
        writeNotices(result, options)
        if result.interrupted { return interrupts.exitStatus }
        return exitStatus(result, reportWritten: reportWritten)
    }

    /// Whether a run may start: `--output` and `--hist-out` can be written and `--server-pid` names a
    /// process on this machine. Says on stderr why not, before anything is run.
    private static func canStart(_ options: BenchOptions) -> Bool {
        for (flag, path) in [("--output", options.outputPath), ("--hist-out", options.histogramOutputPath)] {
            guard let path else { continue }
            do {
                try ReportFile.checkWritable(path)
            } catch {
                StandardError.write("larder bench: cannot write \(flag) \(path): \(ReportFile.reason(error)); nothing was run\n")
                return false
            }
        }
        if let pid = options.serverPID, CPUUsage.processSeconds(pid: pid) == nil {
            StandardError.write("larder bench: --server-pid \(pid): no such process (or its /proc/\(pid)/stat cannot be read: "
                                + "it must run on this machine); nothing was run\n")
            return false
        }
        return true
    }

    /// What a second Ctrl-C or SIGTERM says before quitting: what the run leaves behind and how to delete it.
    private static func quittingNotice(_ options: BenchOptions, data: CreatedData) -> String {
        data.isEmpty ? "\nlarder bench: interrupted twice; quitting\n"
            : "\nlarder bench: interrupted twice; quitting without deleting \(data.summary)\n"
            + "larder bench: delete it with: "
            + CleanupReport(prefix: data.prefix, created: "", tls: options.tls).cleanUpCommand(server: options.server)
            + "\n"
    }

    /// Writes the `--hist-out` spectrum, then the report to `--output` or stdout.
    /// - Returns: whether every file asked for was written.
    private static func writeReports(_ result: BenchResult, _ options: BenchOptions) -> Bool {
        let histogramWritten = writeHistogram(result, options)
        let reportWritten = writeReport(BenchReport.render(result, format: options.format), options)
        return histogramWritten && reportWritten
    }

    /// Writes the latency spectrum to `--hist-out`, if given.
    /// - Returns: false when the file could not be written (said on stderr).
    private static func writeHistogram(_ result: BenchResult, _ options: BenchOptions) -> Bool {
        guard let path = options.histogramOutputPath else { return true }
        do {
            try ReportFile.write(result.latency.percentileSpectrumText(), to: path)
            return true
        } catch {
            StandardError.write("larder bench: cannot write --hist-out \(path): \(ReportFile.reason(error))\n")
            return false
        }
    }

    /// Writes `report` to `--output`, or to stdout without it or when that file cannot be written.
    /// - Returns: false when `--output` could not be written (said on stderr).
    private static func writeReport(_ report: String, _ options: BenchOptions) -> Bool {
        guard let path = options.outputPath else { return writeToStandardOutput(report) }
        do {
            try ReportFile.write(report, to: path)
            StandardError.write("larder bench: wrote the \(options.format.rawValue) report to \(path)\n")
            return true
        } catch {
            StandardError.write("larder bench: cannot write --output \(path): \(ReportFile.reason(error)); "
                                + "the report follows on stdout\n")
            _ = writeToStandardOutput(report)
            return false
        }
    }

    /// Writes `report` to stdout. - Returns: false when it could not be written (said on stderr).
    private static func writeToStandardOutput(_ report: String) -> Bool {
        guard let failure = DescriptorWriter.writeAll(1, report) else { return true }
        StandardError.write("larder bench: cannot write the report to stdout (\(failure.message)): "
                            + "what was written is incomplete\n")
        return false
    }

    /// The notices after the report, on stderr: what became of the data (the text report says it itself),
    /// each distinct connection failure, and why the run stopped early.
    private static func writeNotices(_ result: BenchResult, _ options: BenchOptions) {
        if options.format != .text, let cleanup = result.cleanup {
            StandardError.write("larder bench: data: \(BenchReport.cleanupText(cleanup, server: options.server))\n")
        }
        for failure in Set(result.connectionFailures).sorted() { StandardError.write("larder bench: \(failure)\n") }
        if let failure = result.stopReason {
            StandardError.write("larder bench: stopped: \(SafeText.escaped(failure))\n")
        }
    }

    /// `couldNotStart` when no call was answered OK and connections failed (the run never got
    /// going: a TLS-only server reached without --tls, say); else `reportNotWritten` when the
    /// report was not written; else 0 when calls were answered, all OK, none lost, the run was
    /// not stopped and its data was not left behind by a failed clean-up; else 1.
    private static func exitStatus(_ result: BenchResult, reportWritten: Bool) -> Int32 {
        if result.callsByCode[.ok, default: 0] == 0 && !result.connectionFailures.isEmpty { return BenchExitStatus.couldNotStart }
        guard reportWritten else { return BenchExitStatus.reportNotWritten }
        let cleanedUp = result.cleanup?.failure == nil
        return result.calls > 0 && result.errors == 0 && result.lostCalls == 0 && result.unsentCalls == 0
            && result.stopReason == nil && cleanedUp ? 0 : BenchExitStatus.failedCalls
    }

    /// `--clean-up PREFIX`: deletes the locations and meal records named `PREFIX…`.
    private static func cleanUp(_ options: BenchOptions, prefix: String) -> Int32 {
        do throws(RPCError) {
            let counts = try DataCleaner.sweep(prefix: prefix, server: options.server, tls: options.tls,
                                               metadata: BenchRunner.seedMetadata(options),
                                               connectTimeoutSeconds: options.connectTimeoutSeconds, mealsSince: .some(nil))
            print("deleted \(Format.grouped(counts.locations)) locations and \(Format.grouped(counts.meals)) "
                + "meal records named \(prefix)…")
            return 0
        } catch {
            StandardError.write("larder bench: --clean-up: \(SafeText.escaped(error.description))\n")
            return BenchExitStatus.couldNotStart
        }
    }
}
