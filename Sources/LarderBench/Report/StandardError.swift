#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem

/// Unbuffered writes to the standard error (progress and notices).
enum StandardError {
    static func write(_ text: String) {
        _ = DescriptorWriter.writeAll(2, text)  // nowhere to report a failure
    }

    /// Whether both the standard output and the standard error are terminals:
    /// the progress line stays silent when either is redirected.
    static var isInteractive: Bool { isatty(1) == 1 && isatty(2) == 1 }
}
