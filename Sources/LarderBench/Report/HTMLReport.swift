/// The HTML form of a report: one self-contained page (no external files or
/// requests) with the summary, the latency histogram, latency over time and
/// throughput over time as inline SVG, the steps of a load schedule, and the
/// text report. A small inline script marks each chart with `data-drawn`, the
/// number of its marks the browser laid out, which the tests read back.
enum HTMLReport {
    static func render(_ result: BenchResult) -> String {
        let options = result.options
        let title = "larder bench: \(BenchReport.workloadText(options)) against \(options.server)"
        var html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + "<title>\(SVGChart.escape(title))</title><style>\(style)</style></head><body>\n"
        html += "<h1>\(SVGChart.escape(title))</h1>\n" + summaryTable(result)
        html += histogramChart(result) + "\n" + latencyChart(result) + "\n" + throughputChart(result) + "\n"
        html += stepsTable(result)
        html += "<h2>Text report</h2><pre>\(SVGChart.escape(BenchReport.text(result)))</pre>\n"
        html += "<script>\(script)</script>\n</body></html>\n"
        return html
    }

    private static func summaryTable(_ result: BenchResult) -> String {
        let latency = result.latency
        var rows: [(String, String)] = [
            ("window", "\(Format.fixed(result.seconds, digits: 2)) s after \(Format.seconds(result.options.warmupSeconds)) warm-up"),
            ("calls", "\(Format.grouped(result.calls)) (\(Format.grouped(result.errors)) errors)"),
            ("calls/s", Format.fixed(result.callsPerSecond, digits: 1)),
        ]
        if latency.totalCount == 0 {
            rows.append(("latency", BenchReport.noLatency))
        } else {
            for percentile in BenchReport.percentiles {
                rows.append((percentile.label, Format.latency(Double(latency.value(atPercentile: percentile.value)))))
            }
            rows.append(("max", Format.latency(Double(latency.max))))
        }
        if result.interrupted { rows.append(("interrupted", "by Ctrl-C or SIGTERM")) }
        if let cleanup = result.cleanup {
            rows.append(("data", BenchReport.cleanupText(cleanup, server: result.options.server)))
        }
        return "<table class=\"summary\">" + rows.map { "<tr><th>\(SVGChart.escape($0.0))</th><td>\(SVGChart.escape($0.1))</td></tr>" }
            .joined() + "</table>\n"
    }

    private static func histogramChart(_ result: BenchResult) -> String {
        let rows = HistogramChart(result.latency).rows
        return SVGChart.bars(id: "latency-histogram", title: "Latency histogram (calls per latency range)",
                             bars: rows.map { ("\(Format.latency(Double($0.lower)))", Double($0.count)) }, yLabel: "calls")
    }

    private static func latencyChart(_ result: BenchResult) -> String {
        let rows = BenchReport.timelineRows(result).filter { $0.window.calls > 0 }
        func series(_ name: String, _ color: String, _ value: (CoarseHistogram) -> UInt64) -> SVGChart.Series {
            SVGChart.Series(name: name, color: color, points: rows.map {
                ($0.start + $0.seconds / 2, Double(value($0.window.latency)) / 1000)
            })
        }
        return SVGChart.lines(
            id: "latency-over-time", title: "Latency over time (ms, per \(Format.seconds(result.timeline.widthSeconds)))",
            series: [series("p50", "#4e79a7") { $0.value(atPercentile: 50) },
                     series("p99", "#f28e2b") { $0.value(atPercentile: 99) },
                     series("max", "#e15759") { $0.max }],
            xMax: result.seconds, yLabel: "ms", yFormat: { Format.fixed($0, digits: $0 < 10 ? 2 : 0) })
    }

    private static func throughputChart(_ result: BenchResult) -> String {
        let rows = BenchReport.timelineRows(result)
        var series = [SVGChart.Series(name: "calls/s", color: "#59a14f",
                                      points: rows.map { ($0.start + $0.seconds / 2, $0.callsPerSecond) })]
        if result.options.isOpenLoop {
            series.append(SVGChart.Series(name: "target calls/s", color: "#888888",
                                          points: rows.compactMap { row in row.target.map { (row.start + row.seconds / 2, $0) } },
                                          dashed: true))
        }
        return SVGChart.lines(id: "throughput-over-time",
                              title: "Throughput over time (calls/s, per \(Format.seconds(result.timeline.widthSeconds)))",
                              series: series, xMax: result.seconds, yLabel: "calls/s",
                              yFormat: { Format.compact($0.rounded()) })
    }

    private static func stepsTable(_ result: BenchResult) -> String {
        let rows = BenchReport.stepRows(result)
        guard !rows.isEmpty else { return "" }
        var html = "<h2>Steps</h2><table class=\"steps\"><tr><th>step</th><th>from</th><th>target/s</th><th>calls/s</th>"
            + "<th>calls</th><th>errors</th><th>p50</th><th>p99</th><th>max</th></tr>"
        for row in rows {
            let cells = [String(row.index + 1), Format.seconds(row.start),
                         row.target.map { Format.grouped(Int($0.rounded())) } ?? "-",
                         Format.fixed(row.callsPerSecond, digits: 1), Format.grouped(row.window.calls),
                         Format.grouped(row.window.errors)] + BenchReport.latencyCells(row.window.latency)
            html += "<tr>" + cells.map { "<td>\(SVGChart.escape($0))</td>" }.joined() + "</tr>"
        }
        return html + "</table>\n"
    }

    private static let style = """
        body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 16px}
        th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}figure{margin:16px 0}
        figcaption{font-weight:600;margin-bottom:4px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}
        """

    /// Counts, per chart, the marks that have a laid-out size, into `data-drawn`.
    private static let script = """
        for (const svg of document.querySelectorAll('svg.chart')) {
          let drawn = 0;
          for (const mark of svg.querySelectorAll('.bar, .series, .point')) {
            const box = mark.getBBox(), rect = mark.getBoundingClientRect();
            if ((box.width > 0 || box.height > 0) && (rect.width > 0 || rect.height > 0)) drawn++;
          }
          svg.setAttribute('data-drawn', String(drawn));
        }
        document.body.setAttribute('data-charts-checked', 'true');
        """
}
