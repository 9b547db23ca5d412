@testable import LarderServer
import Testing

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
}
