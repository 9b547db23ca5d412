import Foundation

/// The CSV form of a report: one table whose `section` column says what a row
/// is — `total`, `workload` (one per workload of a mix), `step` (one per step
/// of `--load-schedule`) and `window` (the measured window in equal slices).
enum CSVReport {
    static let header = "section,name,start_s,seconds,target_rate,calls,errors,calls_per_s,p50_us,p90_us,p99_us,max_us"

    static func render(_ result: BenchResult) -> String {
        var lines = [header]
        let latency = result.latency
        lines.append(row("total", BenchReport.workloadText(result.options), start: 0, seconds: result.seconds,
                         target: result.options.rate, calls: result.calls, errors: result.errors,
                         percentiles: [latency.value(atPercentile: 50), latency.value(atPercentile: 90),
                                       latency.value(atPercentile: 99), latency.max]))
        for (workload, stats) in BenchReport.sortedWorkloads(result) {
            let histogram = stats.latency
            lines.append(row("workload", workload.rawValue, start: 0, seconds: result.seconds, target: nil,
                             calls: stats.calls, errors: stats.errors,
                             percentiles: [histogram.value(atPercentile: 50), histogram.value(atPercentile: 90),
                                           histogram.value(atPercentile: 99), histogram.max]))
        }
        for step in BenchReport.stepRows(result) { lines.append(windowRow("step", step)) }
        for window in BenchReport.timelineRows(result) { lines.append(windowRow("window", window)) }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func windowRow(_ section: String, _ row: BenchReport.WindowRow) -> String {
        let latency = row.window.latency
        return self.row(section, String(row.index + 1), start: row.start, seconds: row.seconds, target: row.target,
                        calls: row.window.calls, errors: row.window.errors,
                        percentiles: [latency.value(atPercentile: 50), latency.value(atPercentile: 90),
                                      latency.value(atPercentile: 99), latency.max])
    }

    private static func row(_ section: String, _ name: String, start: Double, seconds: Double, target: Double?,
                            calls: Int, errors: Int, percentiles: [UInt64]) -> String
    {
        let perSecond = seconds > 0 ? Double(calls) / seconds : 0
        return ([section, quoted(name), Format.fixed(start, digits: 3), Format.fixed(seconds, digits: 3),
                 target.map { Format.fixed($0, digits: 1) } ?? "", String(calls), String(errors),
                 Format.fixed(perSecond, digits: 1)] + percentiles.map { String($0) }).joined(separator: ",")
    }

    /// RFC 4180 quoting when the text needs it.
    static func quoted(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
