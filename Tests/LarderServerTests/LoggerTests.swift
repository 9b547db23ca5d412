import Foundation
@testable import LarderServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// logfmt values: what a client can put in a log line through the fields the server logs
/// (method names, peers' metadata) is escaped and bounded.
@Suite struct LoggerTests {
    @Test func plainValuesAreBareAndOthersQuotedWithEscapes() {
        #expect(Logger.quoted("GetLocation") == "GetLocation")
        #expect(Logger.quoted("") == "\"\"")
        #expect(Logger.quoted("a b=\"c\"\\") == "\"a b=\\\"c\\\"\\\\\"")
        #expect(Logger.quoted("line\nbreak\t") == "\"line\\nbreak\\t\"")
    }

    @Test func controlCharactersC1IncludedAreEscaped() {
        #expect(Logger.quoted("\u{1B}[31mred") == "\"\\u{1b}[31mred\"")
        #expect(Logger.quoted("a\u{9B}31m") == "\"a\\u{9b}31m\"")
        #expect(Logger.quoted("del\u{7F}") == "\"del\\u{7f}\"")
        #expect(Logger.quoted("café") == "café")
        // Line and paragraph separators, which some log tools split lines at, and bidirectional
        // overrides, which reorder what a reader sees (audit 33); joiners that scripts need stay.
        #expect(Logger.quoted("a\u{2028}level=error") == "\"a\\u{2028}level=error\"")
        #expect(Logger.quoted("x\u{2029}") == "\"x\\u{2029}\"")
        #expect(Logger.quoted("\u{202E}txt.exe") == "\"\\u{202e}txt.exe\"")
        #expect(Logger.quoted("क्\u{200D}ष") == "क्\u{200D}ष")
    }

    @Test func aHugeValueIsCutOnAScalarBoundaryWithItsSize() {
        let huge = String(repeating: "é", count: 3_000_000)  // 2 bytes each
        let line = Logger.quoted(huge)
        #expect(line.utf8.count < Logger.maxValueBytes + 64)
        #expect(line.hasPrefix("\"éé") && line.hasSuffix("… (6000000 bytes)\""))
        #expect(!line.contains("\u{FFFD}"))
        let exact = String(repeating: "a", count: Logger.maxValueBytes)
        #expect(Logger.quoted(exact) == exact)
    }

    /// A descriptor left non-blocking and full (a slow log reader) cuts no line in half
    /// (review 31 M4): the write waits for room.
    @Test func aLineToAFullNonBlockingPipeArrivesWhole() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        // Full before the line is written: its first write gets EAGAIN.
        var filler = [UInt8](repeating: UInt8(ascii: "f"), count: 4096)
        var prefilled = 0
        while case let written = write(fds[1], &filler, filler.count), written > 0 { prefilled += written }
        let line = String(repeating: "x", count: 300_000) + "\n"  // several times a pipe's 64 KiB
        let writer = Thread { [writeFD = fds[1]] in
            Logger.writeRaw(line, fd: writeFD)
            close(writeFD)
        }
        writer.start()
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        #expect(prefilled > 0 && received.count == prefilled + line.utf8.count && received.last == UInt8(ascii: "\n"))
    }
}

/// The events a peer can cause at will are written at most `lines` times per interval each;
/// the rest are counted into one `log_suppressed` line.
@Suite struct LogRateLimitTests {
    static let second: UInt64 = 1_000_000_000

    @Test func eachEventHasItsOwnWindowAndTheCountComesWhenItEnds() {
        let limiter = LogRateLimiter(LogRateLimit(events: ["a", "b"], lines: 3, intervalSeconds: 5))
        #expect(limiter.limits("a") && !limiter.limits("call_failed"))
        let first = (0..<10).map { limiter.admit("a", level: .warn, now: 100 + UInt64($0)).write }
        #expect(first == [true, true, true] + Array(repeating: false, count: 7))
        #expect(limiter.admit("b", level: .error, now: 200).write, "another event is counted apart")
        #expect(limiter.takeEnded(now: 100 + 5 * Self.second - 1).isEmpty, "not over yet")
        // The next line after the interval is written, after the count of the window that ended.
        let next = limiter.admit("a", level: .warn, now: 100 + 5 * Self.second)
        #expect(next.write)
        #expect(next.ended == LogRateLimiter.Suppressed(event: "a", level: .warn, lines: 7))
        // With no line after it, the tick's flush reports it; a window that held nothing back says nothing.
        for offset in 1...5 { _ = limiter.admit("a", level: .warn, now: 100 + 5 * Self.second + UInt64(offset)) }
        #expect(limiter.takeEnded(now: 100 + 10 * Self.second + 5)
                == [LogRateLimiter.Suppressed(event: "a", level: .warn, lines: 3)])
        #expect(limiter.takeEnded(now: 100 + 20 * Self.second).isEmpty)
    }

    /// 10,000 refused calls' lines through a `Logger`: the first 10 are written, then one line
    /// with the count of the other 9,990; an event outside the limit is written every time.
    @Test func aLoggerWritesTheFirstLinesAndOneCount() throws {
        var template = Array("/tmp/larder-logger-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        defer {
            close(fd)
            unlink(template)
        }
        // The server's events and line count, in a window no pause of a busy machine outlasts
        // (in 5 s ones, a stall mid-loop opened a second window and its 10 lines).
        let limit = LogRateLimit.peerTriggered
        let logger = Logger(fd: fd, rateLimit: LogRateLimit(events: limit.events, lines: limit.lines, intervalSeconds: 3600))
        for call in 0..<10_000 { logger.warn("unauthenticated", ["call": call, "reason": "invalid bearer token"]) }
        for call in 0..<50 { logger.error("call_failed", ["call": call]) }
        logger.debug("unauthenticated", ["call": -1])  // below the level: neither written nor counted
        logger.flushSuppressed(all: true)
        let lines = try Self.contents(fd).split(separator: "\n")
        let refused = lines.filter { $0.contains("event=unauthenticated") }
        let failed = lines.filter { $0.contains("event=call_failed") }
        let summary = lines.filter { $0.contains("event=log_suppressed") }
        #expect(refused.count == 10)
        #expect(failed.count == 50)
        #expect(summary.count == 1)
        #expect(summary.first?.hasSuffix(
            "level=warn event=log_suppressed suppressed=unauthenticated lines=9990 interval_s=3600 limit=10") == true,
                "\(summary)")
        #expect(lines.count == 61)
    }

    static func contents(_ fd: Int32) throws -> String {
        let size = lseek(fd, 0, SEEK_END)
        lseek(fd, 0, SEEK_SET)
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        try #require(count == size)
        return String(decoding: bytes, as: UTF8.self)
    }
}
