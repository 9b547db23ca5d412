/// Exit statuses of `larder bench`: 2 and 3 mean what they mean for the rest of `larder`
/// (`LarderCLI.ExitCode`); 130 and 143 come from `InterruptHandler`.
enum BenchExitStatus {
    /// Some calls failed or went unsent, the run stopped short, or its data was left behind.
    static let failedCalls: Int32 = 1
    /// A command-line mistake, an output path that cannot be written included.
    static let usage: Int32 = 2
    /// The report (to a file or stdout) or the histogram could not be written.
    static let reportNotWritten: Int32 = 3
    /// The run never got going (connecting, creating its data, connections failing before any
    /// call was answered OK), or `--clean-up` could not delete.
    static let couldNotStart: Int32 = 4
}
