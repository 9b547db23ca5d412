import Foundation
@testable import LarderBench
import LarderTestSupport
import Testing

@Suite("Report files (--output, --hist-out)")
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
