/// Renders rows as a plain-text table whose columns line up on a terminal,
/// measuring cells by display width (a CJK character is 2 columns).
///
/// With `maxWidth`, a table wider than that cuts the cells of its shrinkable
/// columns (the widest first, never below their minimum) and marks each cut with `…`.
public struct TableRenderer: Sendable {
    public enum Alignment: Sendable {
        case left, right
    }

    /// Where a cell that is too wide loses text.
    public enum Truncation: Sendable {
        /// Keep the start: `Oatmeal with ba…`.
        case end
        /// Keep both ends: `/larder.v1.Meal…/GetMealRecord`. A path's last component stays
        /// whole when it leaves a few columns for the start (`/lar…/CreateCategoryGroup`): it is
        /// what tells `/pkg.Service/CreateX` from `/pkg.Service/DeleteX` in a narrow column.
        case middle
    }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment
        /// The narrowest this column may be cut to; nil = never cut.
        public var minWidth: Int?
        public var truncation: Truncation
        /// Columns of a lower rank are cut (down to their `minWidth`) before any of a higher one.
        public var shrinkRank: Int

        public init(_ title: String, _ alignment: Alignment = .left, shrinksTo minWidth: Int? = nil,
                    truncation: Truncation = .end, shrinkRank: Int = 0) {
            self.title = title
            self.alignment = alignment
            self.minWidth = minWidth
            self.truncation = truncation
            self.shrinkRank = shrinkRank
        }
    }

    public var columns: [Column]
    public var rows: [[String]]
    /// Whether the first line holds the column titles.
    public var showsHeader: Bool
    /// The widest a line may be, in terminal columns; nil = no limit.
    public var maxWidth: Int?

    public static let separator = "  "

    public init(columns: [Column], rows: [[String]] = [], showsHeader: Bool = true, maxWidth: Int? = nil) {
        self.columns = columns
        self.rows = rows
        self.showsHeader = showsHeader
        self.maxWidth = maxWidth
    }

    /// The table, one line per row, columns separated by two spaces, no trailing spaces.
    public func render() -> String {
        var lines = rows.map { row in columns.indices.map { Self.sanitize($0 < row.count ? row[$0] : "") } }
        if showsHeader { lines.insert(columns.map(\.title), at: 0) }
        var widths = [Int](repeating: 0, count: columns.count)
        for line in lines {
            for (index, cell) in line.enumerated() { widths[index] = max(widths[index], DisplayWidth.of(cell)) }
        }
        if let maxWidth { widths = fitted(widths, into: maxWidth) }
        var output = ""
        for line in lines {
            var text = ""
            for (index, cell) in line.enumerated() {
                if index > 0 { text += Self.separator }
                let cut = Self.truncate(cell, to: widths[index], columns[index].truncation)
                let padding = String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(cut)))
                switch columns[index].alignment {
                case .left: text += cut + padding
                case .right: text += padding + cut
                }
            }
            while text.last == " " { text.removeLast() }
            output += text + "\n"
        }
        return output
    }

    /// Narrows the shrinkable columns of the lowest `shrinkRank` first, the widest of them first,
    /// until the line fits `maxWidth` or none can shrink.
    func fitted(_ natural: [Int], into maxWidth: Int) -> [Int] {
        var widths = natural
        let available = maxWidth - Self.separator.count * max(0, columns.count - 1)
        var excess = widths.reduce(0, +) - available
        while excess > 0 {
            let shrinkable = columns.indices.filter { index in
                columns[index].minWidth.map { widths[index] > max(1, $0) } ?? false
            }
            guard let rank = shrinkable.map({ columns[$0].shrinkRank }).min() else { break }
            var widest: Int?
            for index in shrinkable where columns[index].shrinkRank == rank {
                if widest.map({ widths[index] > widths[$0] }) ?? true { widest = index }
            }
            guard let widest else { break }
            widths[widest] -= 1
            excess -= 1
        }
        return widths
    }

    /// `text` cut to `width` columns with `…` where text was left out; unchanged when it fits.
    public static func truncate(_ text: String, to width: Int, _ truncation: Truncation = .end) -> String {
        guard DisplayWidth.of(text) > width else { return text }
        guard width > 1 else { return width == 1 ? "…" : "" }
        let budget = width - 1
        switch truncation {
        case .end:
            return prefix(of: text, width: budget) + "…"
        case .middle:
            if let slash = text.lastIndex(of: "/"), slash != text.startIndex {
                let last = String(text[slash...])
                let lastWidth = DisplayWidth.of(last)
                if lastWidth + 3 <= budget, lastWidth > (budget - 1) / 2 {
                    return prefix(of: text, width: budget - lastWidth) + "…" + last
                }
                // Too narrow for any of the start: the method's start tells the rows apart.
                if lastWidth + 3 > budget, budget >= 4 {
                    return lastWidth <= budget ? "…" + last : "…" + prefix(of: last, width: budget - 1) + "…"
                }
            }
            let head = prefix(of: text, width: (budget + 1) / 2)
            let tail = suffix(of: text, width: budget - DisplayWidth.of(head))
            return head + "…" + tail
        }
    }

    /// The longest start of `text` (whole grapheme clusters) at most `width` columns wide.
    static func prefix(of text: String, width: Int) -> String {
        var used = 0
        var end = text.startIndex
        for character in text {
            let next = used + DisplayWidth.of(character)
            if next > width { break }
            used = next
            end = text.index(after: end)
        }
        return String(text[..<end])
    }

    /// The longest end of `text` (whole grapheme clusters) at most `width` columns wide.
    static func suffix(of text: String, width: Int) -> String {
        var used = 0
        var start = text.endIndex
        for character in text.reversed() {
            let next = used + DisplayWidth.of(character)
            if next > width { break }
            used = next
            start = text.index(before: start)
        }
        return String(text[start...])
    }

    /// Control characters (newlines, escapes, U+009B), bidirectional overrides and line separators
    /// would break the layout or drive the terminal: written as `\u{1B}` (`TerminalText.value`).
    static func sanitize(_ cell: String) -> String {
        TerminalText.value(cell)
    }
}
