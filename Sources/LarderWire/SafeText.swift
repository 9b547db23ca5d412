/// Text from the other side of a connection, made fit to put in a message: bounded in size,
/// and with nothing in it that a terminal would act on.
///
/// The server quotes client-supplied values in its error messages (`id must be a UUID, got
/// "nope"`), and `larder` prints the server's messages on a terminal. Without this, a 4 MiB id
/// came back whole, and an escape sequence in a `color_hex` reached the user's terminal raw.
public enum SafeText {
    /// Characters of a value `quoted` shows before it cuts the rest.
    public static let maxCharacters = 64
    /// UTF-8 bytes of a value `quoted` shows (escapes included) before it cuts the rest: bounds
    /// a value of a few huge characters (one grapheme can hold thousands of combining marks).
    public static let maxBytes = 256
    /// Unicode scalars `quoted` looks at: the work is bounded whatever the value's length.
    static let windowScalars = 1024

    /// `value` in double quotes, for an error message: at most `maxCharacters` characters
    /// (and `maxBytes` bytes), cut on a character boundary with `…` and the value's full size
    /// in UTF-8 bytes after the quotes; every scalar `escaped` would escape is escaped. A
    /// short, printable value comes out exactly as `"\(value)"`.
    ///
    /// `"nope"`; `"aaaa…" (4194304 bytes)` (64 a's, then the cut); `"\u{1B}[31m"`.
    public static func quoted(_ value: String) -> String {
        quoted(value[...])
    }

    /// `quoted` of a slice.
    public static func quoted(_ value: Substring) -> String {
        let (shown, cut) = bounded(value)
        return cut ? "\"\(shown)…\" (\(value.utf8.count) bytes)" : "\"\(shown)\""
    }

    /// `value` bounded and escaped as `quoted` does, without the quotes, for a message that
    /// shows a token bare (`HTTP method GET is not POST`): `GET`, or `XXXX… (4096 bytes)`.
    public static func unquoted(_ value: String) -> String {
        let (shown, cut) = bounded(value[...])
        return cut ? "\(shown)… (\(value.utf8.count) bytes)" : shown
    }

    /// The characters of `value` that `quoted` shows, escaped, and whether it cut the rest.
    private static func bounded(_ value: Substring) -> (shown: String, cut: Bool) {
        let scalars = value.unicodeScalars
        let windowEnd = scalars.index(scalars.startIndex, offsetBy: windowScalars, limitedBy: scalars.endIndex)
            ?? scalars.endIndex
        let window = Substring(scalars[..<windowEnd])
        var shown = ""
        var characters = 0
        var position = window.startIndex
        while position < window.endIndex {
            let next = window.index(after: position)
            // The window's last character may be the start of a longer one.
            if characters == maxCharacters || (next == window.endIndex && windowEnd != scalars.endIndex) {
                return (shown, true)
            }
            var piece = ""
            append(window.unicodeScalars[position..<next], to: &piece)
            if shown.utf8.count + piece.utf8.count > maxBytes { return (shown, true) }
            shown += piece
            characters += 1
            position = next
        }
        return (shown, false)
    }

    /// A whole message from the other side (a status message), escaped as `escaped` does and
    /// cut after its first `maxMessageBytes` bytes on a scalar boundary, with its full size:
    /// `…abc… (3145728 bytes in all)`. A server may send 4 MiB of it; nobody reads that on a terminal.
    public static func message(_ text: String) -> String {
        guard text.utf8.count > maxMessageBytes else { return escaped(text) }
        return escaped(head(of: text)) + "… (\(text.utf8.count) bytes in all)"
    }

    /// The first `maxMessageBytes` bytes of `text`, cut on a scalar boundary (`message`'s cut, unescaped).
    public static func head(of text: String) -> Substring {
        var kept = text.unicodeScalars.startIndex
        var bytes = 0
        for index in text.unicodeScalars.indices {
            let size = UTF8.width(text.unicodeScalars[index])
            if bytes + size > maxMessageBytes { break }
            bytes += size
            kept = text.unicodeScalars.index(after: index)
        }
        return Substring(text.unicodeScalars[..<kept])
    }

    /// Bytes of a message `message` shows before it cuts the rest.
    public static let maxMessageBytes = 4096

    /// `text` with every control character (C0, DEL, C1), format character (bidirectional
    /// overrides and the like; not the zero-width joiners that emoji and scripts need), line or
    /// paragraph separator and unassigned scalar written as `\u{1B}`; everything else as is.
    /// For printing a message that came over the network.
    public static func escaped(_ text: some StringProtocol) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        append(text.unicodeScalars, to: &out)
        return out
    }

    /// True for a scalar that `escaped` writes as `\u{…}`.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        if value < 0x7F { return false }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate:
            return true
        case .format:
            return value != 0x200C && value != 0x200D  // ZWNJ, ZWJ
        default:
            return false
        }
    }

    private static func append(_ scalars: some Sequence<Unicode.Scalar>, to out: inout String) {
        for scalar in scalars {
            if needsEscape(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
}
