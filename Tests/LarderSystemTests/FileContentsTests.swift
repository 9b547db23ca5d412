import Foundation
import LarderSystem
import Testing

@Suite("FileContents: files a user names, pipes included")
struct FileContentsTests {
    @Test func readsARegularFileAndRefusesOneOverTheLimit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("larder-contents-\(UInt64.random(in: 0 ... .max))").path
        try Data(repeating: 0x61, count: 70_000).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try FileContents.read(path, maxBytes: 70_000) == [UInt8](repeating: 0x61, count: 70_000))
        #expect(throws: FileContents.Failure.tooLarge(byteCount: 70_000)) { try FileContents.read(path, maxBytes: 69_999) }
    }

    /// Foundation's `contents(atPath:)` failed on a pipe with "Inappropriate ioctl for device"
    /// (`--token-file <(…)`, `-d @/dev/stdin`: audit 27 M1).
    @Test func readsAPipeToItsEnd() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let writer = Thread {
            let text = Array("s3cret\n".utf8)
            _ = text.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        #expect(try FileContents.read("/dev/fd/\(readEnd)", maxBytes: 1024) == Array("s3cret\n".utf8))
    }

    @Test func failuresSayWhy() {
        #expect(throws: FileContents.Failure.system(Errno(code: ENOENT))) { try FileContents.read("/no/such/file", maxBytes: 10) }
        #expect(throws: FileContents.Failure.system(Errno(code: EISDIR))) { try FileContents.read("/tmp", maxBytes: 10) }
        #expect(FileContents.Failure.system(Errno(code: EISDIR)).reason == "Is a directory")
        #expect((try? FileContents.read("/dev/null", maxBytes: 10)) == [])
    }
}
