import LarderWire

/// What a hostile server puts in its strings: a window title (OSC … BEL), a screen clear, a
/// carriage return, a CSI written as U+009B, two newlines before a forged line, a bidi override.
enum HostileText {
    static let evil = "\u{1B}]0;PWNED\u{7}\u{1B}[2J\r\u{9B}31m\n\nforged line\u{202E}"
    /// `evil` as larder prints it: `\u{1B}]0;PWNED\u{7}…`, on one line.
    static let escaped = SafeText.escaped(evil)

    /// True when nothing in `text` would drive a terminal: no scalar `SafeText` escapes, but
    /// the line breaks larder writes itself.
    static func isInert(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == "\n" || !SafeText.needsEscape($0) }
    }
}
