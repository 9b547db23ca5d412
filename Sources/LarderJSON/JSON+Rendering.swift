extension JSON {
    /// Pretty-printed with two-space indentation and a final newline; non-ASCII text stays UTF-8,
    /// but for C1 controls and U+2028/U+2029, escaped like C0 and DEL (`\u009b`).
    public func rendered() -> String {
        var output = ""
        write(to: &output, indent: 0, pretty: true)
        return output + "\n"
    }

    /// On one line, no spaces.
    public func compact() -> String {
        var output = ""
        write(to: &output, indent: 0, pretty: false)
        return output
    }

    private func write(to output: inout String, indent: Int, pretty: Bool) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let text): output += text
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let items):
            if items.isEmpty {
                output += "[]"
                return
            }
            output += pretty ? "[\n" : "["
            for (index, item) in items.enumerated() {
                if pretty { output += String(repeating: "  ", count: indent + 1) }
                item.write(to: &output, indent: indent + 1, pretty: pretty)
                if index < items.count - 1 { output += "," }
                if pretty { output += "\n" }
            }
            if pretty { output += String(repeating: "  ", count: indent) }
            output += "]"
        case .object(let members):
            if members.isEmpty {
                output += "{}"
                return
            }
            output += pretty ? "{\n" : "{"
            for (index, member) in members.enumerated() {
                if pretty { output += String(repeating: "  ", count: indent + 1) }
                Self.writeString(member.key, to: &output)
                output += pretty ? ": " : ":"
                member.value.write(to: &output, indent: indent + 1, pretty: pretty)
                if index < members.count - 1 { output += "," }
                if pretty { output += "\n" }
            }
            if pretty { output += String(repeating: "  ", count: indent) }
            output += "}"
        }
    }

    private static func writeString(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                // C0, DEL and C1 (U+009B is a terminal's CSI): printed JSON must not drive a terminal.
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}"
                    || scalar == "\u{2029}" {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
