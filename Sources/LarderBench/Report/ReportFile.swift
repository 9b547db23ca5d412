import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes a report file whole or not at all: a temporary file beside it, then `rename(2)`.
///
/// Not `String.write(toFile:atomically: true)`: on Linux, Foundation leaves an empty
/// `TemporaryDirectory.*` in /tmp behind for every such write.
enum ReportFile {
    /// Replaces the file at `path` with `text` (UTF-8).
    /// - Throws: what writing the temporary file threw, or the `rename` failure (as a POSIX error).
    static func write(_ text: String, to path: String) throws {
        let temporary = path + ".partial-\(getpid())"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
