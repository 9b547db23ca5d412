import Foundation

/// The CSV form of a report: one table whose `section` column says what a row
/// is — `total`, `workload` (one per workload of a mix), `step` (one per step
/// of `--load-schedule`) and `window` (the measured window in equal slices). A row with no
/// answered call leaves its latency fields empty.
enum CSVReport {
    static let header = "section,name,start_s,seconds,target_rate,calls,errors,calls_per_s,p50_us,p90_us,p99_us,max_us"

    static func render(_ result: BenchResult) -> String {
        var lines = [header]
        lines.append(row("total", BenchReport.workloadText(result.options), start: 0, seconds: result.seconds,
                         target: result.options.rate, calls: result.calls, errors: result.errors,
                         latency: result.latency))
        for (workload, stats) in BenchReport.sortedWorkloads(result) {
            lines.append(row("workload", workload.rawValue, start: 0, seconds: result.seconds, target: nil,
                             calls: stats.calls, errors: stats.errors, latency: stats.latency))
        }
        for step in BenchReport.stepRows(result) { lines.append(windowRow("step", step)) }
        for window in BenchReport.timelineRows(result) { lines.append(windowRow("window", window)) }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func windowRow(_ section: String, _ row: BenchReport.WindowRow) -> String {
        self.row(section, String(row.index + 1), start: row.start, seconds: row.seconds, target: row.target,
                 calls: row.window.calls, errors: row.window.errors, latency: row.window.latency)
    }

    private static func row(_ section: String, _ name: String, start: Double, seconds: Double, target: Double?,
                            calls: Int, errors: Int, latency: some LatencySummary) -> String
    {
        let perSecond = seconds > 0 ? Double(calls) / seconds : 0
        let percentiles = latency.totalCount == 0 ? ["", "", "", ""]
            : [latency.value(atPercentile: 50), latency.value(atPercentile: 90), latency.value(atPercentile: 99),
               latency.max].map { String($0) }
        return ([section, quoted(name), Format.fixed(start, digits: 3), Format.fixed(seconds, digits: 3),
                 target.map { Format.fixed($0, digits: 1) } ?? "", String(calls), String(errors),
                 Format.fixed(perSecond, digits: 1)] + percentiles).joined(separator: ",")
    }

    /// RFC 4180 quoting when the text needs it.
    static func quoted(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
