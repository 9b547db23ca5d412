/// Renders rows as a plain-text table whose columns line up on a terminal,
/// measuring cells by display width (a CJK character is 2 columns).
public struct TableRenderer: Sendable {
    public enum Alignment: Sendable {
        case left, right
    }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment
        public init(_ title: String, _ alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

    public var columns: [Column]
    public var rows: [[String]]
    /// Whether the first line holds the column titles.
    public var showsHeader: Bool

    public init(columns: [Column], rows: [[String]] = [], showsHeader: Bool = true) {
        self.columns = columns
        self.rows = rows
        self.showsHeader = showsHeader
    }

    /// The table, one line per row, columns separated by two spaces, no trailing spaces.
    public func render() -> String {
        var lines = rows.map { row in columns.indices.map { Self.sanitize($0 < row.count ? row[$0] : "") } }
        if showsHeader { lines.insert(columns.map(\.title), at: 0) }
        var widths = [Int](repeating: 0, count: columns.count)
        for line in lines {
            for (index, cell) in line.enumerated() { widths[index] = max(widths[index], DisplayWidth.of(cell)) }
        }
        var output = ""
        for line in lines {
            var text = ""
            for (index, cell) in line.enumerated() {
                if index > 0 { text += "  " }
                let padding = String(repeating: " ", count: widths[index] - DisplayWidth.of(cell))
                switch columns[index].alignment {
                case .left: text += cell + padding
                case .right: text += padding + cell
                }
            }
            while text.last == " " { text.removeLast() }
            output += text + "\n"
        }
        return output
    }

    /// Control characters (newlines, escapes) would break the layout or drive the terminal: show them as U+FFFD.
    static func sanitize(_ cell: String) -> String {
        guard cell.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return cell }
        var result = String.UnicodeScalarView()
        for scalar in cell.unicodeScalars {
            result.append(scalar.properties.generalCategory == .control ? "\u{FFFD}" : scalar)
        }
        return String(result)
    }
}
