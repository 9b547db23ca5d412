import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes a report file whole or not at all: a temporary file beside it, then `rename(2)`.
///
/// Not `String.write(toFile:atomically: true)`: on Linux, Foundation leaves an empty
/// `TemporaryDirectory.*` in /tmp behind for every such write.
enum ReportFile {
    /// Checks, before a run, that `write` can put a file at `path`: its directory takes a
    /// new file (the temporary one is made and removed), and `path` is not a directory.
    /// - Throws: the reason, as a POSIX error.
    static func checkWritable(_ path: String) throws {
        var status = stat()
        if stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            throw POSIXError(.EISDIR)
        }
        let temporary = temporaryPath(for: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        Glibc.close(fd)
        unlink(temporary)
    }

    /// Where `write` puts the text before renaming it to `path` (the same directory, so the
    /// rename is atomic; named after this process, so two runs do not collide).
    private static func temporaryPath(for path: String) -> String { path + ".partial-\(getpid())" }

    /// Replaces the file at `path` with `text` (UTF-8).
    /// - Throws: what writing the temporary file threw, or the `rename` failure (as a POSIX error).
    static func write(_ text: String, to path: String) throws {
        let temporary = temporaryPath(for: path)
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
