import LarderWire

/// Text on its way to a terminal: what a server sent is made inert here, with the one rule of
/// `SafeText.escaped` (control characters, C1 such as U+009B, bidirectional overrides and line
/// separators written as `\u{1B}`), so that no name, id, token or message drives the terminal.
enum TerminalText {
    /// One value from the server (an id, a name, a page token, a type name) for a line of
    /// output: escaped whole, newlines included, so it stays on its line.
    static func value(_ text: some StringProtocol) -> String {
        SafeText.escaped(text)
    }

    /// Text of whole lines that larder put together: its line breaks and tabs stay, anything
    /// else `value` escapes is escaped. A command's text output and hints (`CommandContext`)
    /// and error reports pass here, so a value that was not escaped where it was put in still
    /// cannot reach the terminal as an escape sequence (it could only break its line).
    static func lines(_ text: String) -> String {
        guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 >= 0x7F }) else {
            return text
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.split(separator: "\t", omittingEmptySubsequences: false).map(SafeText.escaped)
                .joined(separator: "\t") }
            .joined(separator: "\n")
    }
}
