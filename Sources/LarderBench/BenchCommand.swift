import Foundation
import LarderWire

/// `larder bench`: the entry point the CLI calls.
public enum BenchCommand {
    /// Parses `arguments` (after `bench`), runs the load, prints the report to
    /// stdout and notices to stderr.
    /// - Returns: the exit status (see `--help`).
    public static func run(arguments: [String], environment: [String: String]) async -> Int32 {
        let options: BenchOptions
        do throws(RPCError) {
            switch try BenchArguments.parse(arguments, environment: environment) {
            case .help:
                print(BenchHelp.text)
                return 0
            case .run(let parsed):
                options = parsed
            }
        } catch {
            StandardError.write("larder bench: \(error.message)\n")
            return 2
        }
        let result: BenchResult
        do throws(RPCError) {
            result = try await BenchRunner.run(options, showProgress: StandardError.isInteractive) { notice in
                StandardError.write("larder bench: \(notice)\n")
            }
        } catch {
            StandardError.write("larder bench: \(error.description)\n")
            return 3
        }
        if let path = options.histogramOutputPath {
            do {
                try result.latency.percentileSpectrumText().write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                StandardError.write("larder bench: cannot write --hist-out \(path): \(error.localizedDescription)\n")
            }
        }
        let report = options.json ? BenchReport.json(result) : BenchReport.text(result)
        FileHandle.standardOutput.write(Data(report.utf8))
        for failure in Set(result.connectionFailures).sorted() { StandardError.write("larder bench: \(failure)\n") }
        return result.calls > 0 && result.errors == 0 && result.lostCalls == 0 ? 0 : 1
    }
}
