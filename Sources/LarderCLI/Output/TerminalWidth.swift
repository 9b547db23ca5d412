#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many columns tables may use.
public enum TerminalWidth {
    /// The width of the terminal behind `sink` (ioctl TIOCGWINSZ), else `COLUMNS` from `environment`;
    /// nil for a descriptor that is no terminal, whatever `COLUMNS` says (output to a pipe or file
    /// is never cut), and when neither is known. A sink without a descriptor (a test's buffer) uses `COLUMNS`.
    public static func columns(of sink: OutputSink, environment: [String: String]) -> Int? {
        if let fd = sink.fileDescriptor {
            guard isatty(fd) == 1 else { return nil }
            if let columns = terminalColumns(fd) { return columns }
        }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return nil
    }

    /// The column count the terminal on `fd` reports; nil when `fd` is no terminal.
    static func terminalColumns(_ fd: Int32) -> Int? {
        guard isatty(fd) == 1 else { return nil }
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
