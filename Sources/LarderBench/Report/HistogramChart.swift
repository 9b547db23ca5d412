/// A latency histogram drawn with block characters over log-spaced ranges
/// (1-2-5 steps: 100µs, 200µs, 500µs, 1ms, ...).
struct HistogramChart {
    /// One row: calls with latency in `lower..<upper` µs.
    struct Row: Equatable {
        var lower: UInt64
        var upper: UInt64
        var count: UInt64
    }

    let rows: [Row]
    let total: UInt64

    init(_ histogram: LatencyHistogram) {
        total = histogram.totalCount
        guard histogram.totalCount > 0 else {
            rows = []
            return
        }
        var bounds: [UInt64] = [0, 1]
        var decade: UInt64 = 1
        while bounds.last! <= histogram.max {
            for step: UInt64 in [2, 5, 10] { bounds.append(decade * step) }
            decade *= 10
        }
        var counts = [UInt64](repeating: 0, count: bounds.count - 1)
        var row = 0
        histogram.forEachNonEmptyBucket { value, count in
            while row < counts.count - 1 && value >= bounds[row + 1] { row += 1 }
            counts[row] += count
        }
        guard let first = counts.firstIndex(where: { $0 > 0 }), let last = counts.lastIndex(where: { $0 > 0 }) else {
            rows = []
            return
        }
        rows = (first...last).map { Row(lower: bounds[$0], upper: bounds[$0 + 1], count: counts[$0]) }
    }

    /// The chart as text lines, bars `width` characters at most.
    func render(width: Int = 40) -> [String] {
        guard let largest = rows.map(\.count).max(), largest > 0 else { return [] }
        let partials = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        // Every row's range in columns as wide as the widest label, so the bars line up.
        let lowers = rows.map { Format.latency(Double($0.lower)) }
        let uppers = rows.map { Format.latency(Double($0.upper)) }
        let lowerWidth = lowers.map(\.count).max() ?? 0
        let upperWidth = uppers.map(\.count).max() ?? 0
        return zip(rows, zip(lowers, uppers)).map { row, label in
            let eighths = Int((Double(row.count) / Double(largest) * Double(width * 8)).rounded())
            var bar = String(repeating: "█", count: eighths / 8) + partials[eighths % 8]
            if row.count > 0 && bar.isEmpty { bar = "▏" }
            let share = Double(row.count) * 100 / Double(total)
            let range = Format.padLeft(label.0, lowerWidth) + " – " + Format.padRight(label.1, upperWidth)
            return "  \(range) │" + Format.padRight(bar, width) + "│ "
                + Format.padLeft(Format.fixed(share, digits: 1), 5) + "%  " + Format.grouped(Int(row.count))
        }
    }
}
