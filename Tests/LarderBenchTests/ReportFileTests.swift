import Foundation
@testable import LarderBench
import LarderTestSupport
import Testing

@Suite("Report files (--output, --hist-out)", .offThePool)
struct ReportFileTests {
    @Test func writesAndReplacesWholeLeavingNothingElseBehind() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-report-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("report.json").path
        try ReportFile.write("{\"first\": 1}\n", to: path)
        try ReportFile.write("{\"second\": 2}\n", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"second\": 2}\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["report.json"])
    }

    @Test func aPathThatCannotBeWrittenThrowsAndLeavesNoPartialFile() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-report-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The target is a directory: the temporary file is written, the rename fails.
        let target = directory.appendingPathComponent("taken")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: target.appendingPathComponent("inside"), withIntermediateDirectories: false)
        #expect(throws: (any Error).self) { try ReportFile.write("x", to: target.path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["taken"])
        #expect(throws: (any Error).self) { try ReportFile.write("x", to: directory.appendingPathComponent("no/such/dir").path) }
    }

    /// The reason reads as the C library says it, for the checks before a run and the writes
    /// after it (audit 27 L7: Foundation's "The operation could not be completed. …").
    @Test func failuresAreSaidAsTheCLibrarySaysThem() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-report-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("no/such/report.json").path
        func reason(_ body: () throws -> Void) -> String? {
            do { try body() } catch { return ReportFile.reason(error) }
            return nil
        }
        #expect(reason { try ReportFile.checkWritable(missing) } == "No such file or directory")
        #expect(reason { try ReportFile.write("x", to: missing) } == "No such file or directory")
        #expect(reason { try ReportFile.checkWritable(directory.path) } == "Is a directory")
        #expect(reason { try ReportFile.write("x", to: "/dev/full") } == "No space left on device")
    }

    /// `-o /dev/full` made /dev/full a regular file, a symbolic link became a file, a FIFO's
    /// reader got nothing, and a 0600 report became 0644 (audit 27 H1).
    @Test func whatThePathNamesIsKept() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-report-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A link stays a link; the file it points to gets the report and keeps its permissions.
        let file = directory.appendingPathComponent("kept.txt").path
        try "old\n".write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o600)
        let link = directory.appendingPathComponent("link.txt").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        try ReportFile.checkWritable(link)
        try ReportFile.write("new\n", to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == file)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "new\n")
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o777 == 0o600)
        // A link to nothing yet: the file is made where it points.
        let dangling = directory.appendingPathComponent("dangling.txt").path
        let pointed = directory.appendingPathComponent("pointed.txt").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: pointed)
        try ReportFile.write("made\n", to: dangling)
        #expect(try String(contentsOfFile: pointed, encoding: .utf8) == "made\n")
        // A FIFO is written into: its reader gets the report.
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try ReportFile.checkWritable(fifo)
        let reader = Thread.detachNewThreadReadingAll(fifo)
        try ReportFile.write("through the pipe\n", to: fifo)
        #expect(reader.wait() == "through the pipe\n")
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        // A device is written into, not replaced: /dev/full refuses with ENOSPC, /dev/null takes it.
        #expect(throws: POSIXError(.ENOSPC)) { try ReportFile.write("x", to: "/dev/full") }
        #expect(stat("/dev/full", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
        try ReportFile.write("x", to: "/dev/null")
        #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
                == ["kept.txt", "link.txt", "dangling.txt", "pointed.txt", "fifo"])
    }

    @Test func theCheckBeforeARunRefusesWhatWriteWouldAndLeavesNothing() throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-report-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        try ReportFile.checkWritable(directory.appendingPathComponent("report.html").path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(throws: (any Error).self) { try ReportFile.checkWritable(directory.path) }
        #expect(throws: (any Error).self) {
            try ReportFile.checkWritable(directory.appendingPathComponent("no/such/dir/report.html").path)
        }
    }
}

extension Thread {
    /// Reads `path` to its end on a new thread (a FIFO's reader); `wait()` returns the text.
    final class PathReader: @unchecked Sendable {  // `text` is written before `done` is signalled, read after
        private let done = DispatchSemaphore(value: 0)
        private var text = ""
        init(_ path: String) {
            Thread.detachNewThread { [self] in
                let fd = open(path, O_RDONLY | O_CLOEXEC)  // waits for the writer
                var bytes: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 4096)
                while fd >= 0 {
                    let count = read(fd, &chunk, chunk.count)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    bytes += chunk[0..<count]
                }
                if fd >= 0 { close(fd) }
                text = String(decoding: bytes, as: UTF8.self)
                done.signal()
            }
        }
        func wait() -> String {
            done.wait()
            return text
        }
    }

    static func detachNewThreadReadingAll(_ path: String) -> PathReader { PathReader(path) }
}
