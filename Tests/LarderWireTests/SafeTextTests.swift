import LarderWire
import Testing

@Suite("SafeText")
struct SafeTextTests {
    @Test("a short printable value is quoted exactly as before",
          arguments: ["nope", "", "#AABBCC", "客廳", "👨‍👩‍👧 family", "a\"b\\c", "Ünïcödé", "update_mask.paths[0]",
                      String(repeating: "x", count: SafeText.maxCharacters)])
    func shortValuesAreUnchanged(value: String) {
        #expect(SafeText.quoted(value) == "\"\(value)\"")
    }

    @Test("control and other non-printing scalars are escaped", arguments: [
        ("\u{1B}[31mred", #""\u{1B}[31mred""#),
        ("tab\there\nnew", #""tab\u{9}here\u{A}new""#),
        ("nul\u{0}del\u{7F}", #""nul\u{0}del\u{7F}""#),
        ("c1\u{9B}31m", #""c1\u{9B}31m""#),
        ("bidi\u{202E}txt", #""bidi\u{202E}txt""#),
        ("bom\u{FEFF}", #""bom\u{FEFF}""#),
        ("line\u{2028}para\u{2029}", #""line\u{2028}para\u{2029}""#),
        ("unassigned\u{FFFE}", #""unassigned\u{FFFE}""#),
    ])
    func nonPrintingScalarsAreEscaped(value: String, expected: String) {
        #expect(SafeText.quoted(value) == expected)
        #expect(SafeText.escaped(value) == String(expected.dropFirst().dropLast()))
    }

    @Test func aLongValueIsCutOnACharacterBoundaryWithItsFullSize() {
        let huge = String(repeating: "a", count: 4 * 1024 * 1024)
        #expect(SafeText.quoted(huge) == "\"" + String(repeating: "a", count: 64) + "…\" (4194304 bytes)")
        // 65 characters of 2 bytes: 64 shown, the size counts bytes.
        let accented = String(repeating: "é", count: 65)
        #expect(SafeText.quoted(accented) == "\"" + String(repeating: "é", count: 64) + "…\" (130 bytes)")
        // Flags are one character of two scalars (8 bytes) each: never split, and the byte
        // bound shows 32 of them.
        let flags = String(repeating: "🇹🇼", count: 70)
        #expect(SafeText.quoted(flags) == "\"" + String(repeating: "🇹🇼", count: 32) + "…\" (560 bytes)")
    }

    @Test func escapesCountTowardsTheByteBound() {
        // 64 escapes of 6 bytes would be 384 bytes: the byte bound cuts first, between escapes.
        let escapes = String(repeating: "\u{1B}", count: 64)
        let quoted = SafeText.quoted(escapes)
        #expect(quoted == "\"" + String(repeating: #"\u{1B}"#, count: SafeText.maxBytes / 6) + "…\" (64 bytes)")
    }

    @Test func aHugeCharacterIsNotShownAndCostsNoMoreThanTheWindow() {
        // One grapheme: "e" and a million combining acute accents.
        let grapheme = "e" + String(repeating: "\u{301}", count: 1_000_000)
        #expect(grapheme.count == 1)
        #expect(SafeText.quoted(grapheme) == "\"…\" (2000001 bytes)")
        // After a short prefix, the prefix is kept.
        #expect(SafeText.quoted("ok " + grapheme) == "\"ok …\" (2000004 bytes)")
        // A character over the byte bound but inside the window is cut whole too.
        let big = "e" + String(repeating: "\u{301}", count: 200)
        #expect(SafeText.quoted("ab" + big) == "\"ab…\" (403 bytes)")
    }

    @Test func escapedLeavesPrintableTextAlone() {
        let message = "INVALID_ARGUMENT: location.color_hex must be #RRGGBB, got \"red\" 客廳 👍🏽"
        #expect(SafeText.escaped(message) == message)
        #expect(SafeText.escaped("a\u{1B}]0;pwned\u{7}b") == #"a\u{1B}]0;pwned\u{7}b"#)
    }

    @Test func unquotedBoundsAndEscapesWithoutQuotes() {
        #expect(SafeText.unquoted("GET") == "GET")
        #expect(SafeText.unquoted("G\u{1B}T") == #"G\u{1B}T"#)
        #expect(SafeText.unquoted(String(repeating: "X", count: 4096)) == String(repeating: "X", count: 64) + "… (4096 bytes)")
    }

    @Test func aSliceIsQuotedLikeAString() {
        let text = "xx\u{1B}yy"
        #expect(SafeText.quoted(text.dropFirst()) == #""x\u{1B}yy""#)
    }

    /// A status message of megabytes (a hostile server's) is cut to its first 4 KiB, on a
    /// scalar boundary, escaped, with its size (audit 14: the CLI printed 5.2 MB of it).
    @Test func aLongMessageIsCutWithItsSize() {
        #expect(SafeText.message("NOT_FOUND: no \u{1B}[31m") == "NOT_FOUND: no \\u{1B}[31m")
        let long = String(repeating: "é", count: 3_000_000)  // 2 bytes each
        let shown = SafeText.message(long)
        #expect(shown == String(repeating: "é", count: 2048) + "… (6000000 bytes in all)")
        let exact = String(repeating: "a", count: SafeText.maxMessageBytes)
        #expect(SafeText.message(exact) == exact)
    }
}
