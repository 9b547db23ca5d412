/// Inline SVG charts for the HTML report: bars over categories, and lines over time.
/// Every drawn mark has class `bar`, `series` or `point`, which the page's check counts.
struct SVGChart {
    /// One line of a time chart.
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
        var dashed = false
    }

    static let width = 760.0
    static let height = 280.0
    static let left = 64.0
    static let right = 16.0
    static let top = 16.0
    static let bottom = 44.0

    /// A bar chart: one bar per `(label, value)`.
    static func bars(id: String, title: String, bars: [(label: String, value: Double)], yLabel: String) -> String {
        let maximum = max(bars.map(\.value).max() ?? 0, 1)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let slot = plotWidth / Double(max(bars.count, 1))
        var body = axes(yMax: maximum, yLabel: yLabel, yFormat: { Format.compact($0.rounded()) })
        for (index, bar) in bars.enumerated() {
            let barHeight = bar.value / maximum * plotHeight
            let x = left + Double(index) * slot + slot * 0.1
            body += "<rect class=\"bar\" x=\"\(n(x))\" y=\"\(n(top + plotHeight - barHeight))\" width=\"\(n(slot * 0.8))\" "
                + "height=\"\(n(barHeight))\" fill=\"#4e79a7\"><title>\(escape(bar.label)): \(Format.compact(bar.value))</title></rect>"
            if bars.count <= 24 || index % ((bars.count + 23) / 24) == 0 {
                body += "<text x=\"\(n(x + slot * 0.4))\" y=\"\(n(height - bottom + 16))\" text-anchor=\"middle\" "
                    + "font-size=\"10\">\(escape(bar.label))</text>"
            }
        }
        return frame(id: id, title: title, body: body)
    }

    /// A line chart over seconds; `yFormat` writes the axis values.
    static func lines(id: String, title: String, series: [Series], xMax: Double, yLabel: String,
                      yFormat: @escaping (Double) -> String) -> String
    {
        let maximum = max(series.flatMap { $0.points.map(\.y) }.max() ?? 0, 1e-9)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let xScale = plotWidth / max(xMax, 1e-9)
        var body = axes(yMax: maximum, yLabel: yLabel, yFormat: yFormat)
        for tick in 0...5 {
            let seconds = xMax * Double(tick) / 5
            body += "<text x=\"\(n(left + seconds * xScale))\" y=\"\(n(height - bottom + 16))\" text-anchor=\"middle\" "
                + "font-size=\"10\">\(Format.fixed(seconds, digits: xMax < 5 ? 1 : 0))s</text>"
        }
        var legendX = left + 8
        for line in series where !line.points.isEmpty {
            let coordinates = line.points.map { "\(n(left + $0.x * xScale)),\(n(top + plotHeight - $0.y / maximum * plotHeight))" }
            body += "<polyline class=\"series\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\""
                + (line.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"\(coordinates.joined(separator: " "))\"/>"
            if line.points.count <= 300 {
                for coordinate in coordinates {
                    let xy = coordinate.split(separator: ",")
                    body += "<circle class=\"point\" cx=\"\(xy[0])\" cy=\"\(xy[1])\" r=\"2\" fill=\"\(line.color)\"/>"
                }
            }
            body += "<rect x=\"\(n(legendX))\" y=\"\(n(top + 2))\" width=\"12\" height=\"4\" fill=\"\(line.color)\"/>"
                + "<text x=\"\(n(legendX + 16))\" y=\"\(n(top + 8))\" font-size=\"11\">\(escape(line.name))</text>"
            legendX += 24 + Double(line.name.count) * 7
        }
        return frame(id: id, title: title, body: body)
    }

    private static func axes(yMax: Double, yLabel: String, yFormat: (Double) -> String) -> String {
        let plotHeight = height - top - bottom
        var out = "<line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(n(top + plotHeight))\" stroke=\"#333\"/>"
            + "<line x1=\"\(n(left))\" y1=\"\(n(top + plotHeight))\" x2=\"\(n(width - right))\" y2=\"\(n(top + plotHeight))\" stroke=\"#333\"/>"
        for tick in 0...4 {
            let value = yMax * Double(tick) / 4
            let y = top + plotHeight - plotHeight * Double(tick) / 4
            out += "<line x1=\"\(n(left))\" y1=\"\(n(y))\" x2=\"\(n(width - right))\" y2=\"\(n(y))\" stroke=\"#ddd\"/>"
                + "<text x=\"\(n(left - 6))\" y=\"\(n(y + 4))\" text-anchor=\"end\" font-size=\"10\">\(escape(yFormat(value)))</text>"
        }
        out += "<text x=\"14\" y=\"\(n(top + plotHeight / 2))\" font-size=\"11\" text-anchor=\"middle\" "
            + "transform=\"rotate(-90 14 \(n(top + plotHeight / 2)))\">\(escape(yLabel))</text>"
        return out
    }

    private static func frame(id: String, title: String, body: String) -> String {
        "<figure><figcaption>\(escape(title))</figcaption><svg class=\"chart\" id=\"\(id)\" "
            + "width=\"\(n(width))\" height=\"\(n(height))\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\">"
            + body + "</svg></figure>"
    }

    private static func n(_ value: Double) -> String { Format.fixed(value, digits: 1) }

    /// `text` safe inside HTML and SVG text and attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
