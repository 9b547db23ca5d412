import Foundation
import LarderSystem
#if canImport(Glibc)
import Glibc
#endif

/// Writes a report file whole or not at all: a temporary file beside it, then `rename(2)`.
///
/// What `path` names is kept: a symbolic link stays a link (the file it points to is
/// replaced, keeping its permissions), and what is not a regular file (a FIFO, `/dev/null`,
/// a terminal), or any path under /dev or /proc (`/dev/stdout`), is written into, as a
/// shell's `>` would, not replaced by a file. (Foundation's `write(toFile:atomically: true)`
/// replaces a link, a FIFO or `/dev/full` with a regular file, audit 27 H1.)
enum ReportFile {
    /// Where a report for `path` goes.
    private enum Target {
        /// A new file, or a regular file replaced whole (`path`: the file itself, links
        /// followed; `mode`: the permissions it keeps, nil for a new file).
        case replaced(path: String, mode: mode_t?)
        /// Something that is not a regular file, written into as it is (`O_WRONLY`).
        case writtenInto(path: String)
    }

    private static func target(for path: String) throws -> Target {
        // /dev/stdout, /dev/fd/N, /proc/self/fd/N: whatever the descriptor is (a redirected
        // regular file included), replacing the file behind it would take the report away from it.
        if path.hasPrefix("/dev/") || path.hasPrefix("/proc/") { return .writtenInto(path: path) }
        var status = stat()
        guard stat(path, &status) == 0 else {
            // Nothing there, or a link to nothing: a new file (through the link, as `>` would).
            var link = stat()
            if lstat(path, &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK { return .writtenInto(path: path) }
            return .replaced(path: path, mode: nil)
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            throw POSIXError(.EISDIR)
        case S_IFREG:
            guard let resolved = realpath(path, nil) else { throw posixError() }
            defer { free(resolved) }
            return .replaced(path: String(cString: resolved), mode: status.st_mode & 0o7777)
        default:
            return .writtenInto(path: path)
        }
    }

    /// Checks, before a run, that `write` can put the report at `path`: a file's directory
    /// takes a new file (the temporary one is made and removed), something else is writable,
    /// and `path` is not a directory.
    /// - Throws: the reason, as a POSIX error.
    static func checkWritable(_ path: String) throws {
        switch try target(for: path) {
        case .replaced(let file, _):
            let temporary = temporaryPath(for: file)
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw posixError() }
            Glibc.close(fd)
            unlink(temporary)
        case .writtenInto(let destination):
            // Not opened: a FIFO would wait here for its reader.
            guard access(destination, W_OK) == 0 || errno == ENOENT else {
                throw posixError(else: .EACCES)
            }
        }
    }

    /// What went wrong, as the C library says it (`No such file or directory`), not as
    /// Foundation does (`The operation could not be completed. …`).
    static func reason(_ error: any Error) -> String {
        guard let posix = error as? POSIXError else { return error.localizedDescription }
        return String(cString: strerror(posix.code.rawValue))
    }

    /// `code` (by default what the last system call set in `errno`) as a POSIX error, or
    /// `fallback` for a code Foundation does not know.
    private static func posixError(_ code: Int32 = errno, else fallback: POSIXErrorCode = .EIO) -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: code) ?? fallback)
    }

    /// Where `write` puts the text before renaming it to `path` (the same directory, so the
    /// rename is atomic; named after this process, so two runs do not collide).
    private static func temporaryPath(for path: String) -> String { path + ".partial-\(getpid())" }

    /// Replaces the file at `path` with `text` (UTF-8), or writes it into what `path` names
    /// when that is not a regular file.
    /// - Throws: a POSIX error: why opening, writing or the `rename` failed.
    static func write(_ text: String, to path: String) throws {
        switch try target(for: path) {
        case .replaced(let file, let mode):
            try replace(file, with: text, mode: mode)
        case .writtenInto(let destination):
            try writeInto(destination, text)
        }
    }

    private static func replace(_ path: String, with text: String, mode: mode_t?) throws {
        let temporary = temporaryPath(for: path)
        do {
            try writeInto(temporary, text)
            if let mode, chmod(temporary, mode) != 0 { throw posixError() }
            guard rename(temporary, path) == 0 else {
                throw posixError()
            }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    private static func writeInto(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError() }
        defer { Glibc.close(fd) }
        if let failure = DescriptorWriter.writeAll(fd, text) {
            throw posixError(failure.code)
        }
    }
}
