import Foundation

/// The parts of a report shared by every format: steps, time windows, data clean-up.
extension BenchReport {
    /// One window of the time series or one step of a load schedule.
    struct WindowRow {
        var index: Int
        /// Seconds from the start of the measured window.
        var start: Double
        var seconds: Double
        /// The schedule's rate in the window (at its start for `step`, its middle for `line`).
        var target: Double?
        var window: TimeSeries.Window
        var callsPerSecond: Double { seconds > 0 ? Double(window.calls) / seconds : 0 }
    }

    /// The steps of `--load-schedule`, the last cut at the end of the measured window.
    static func stepRows(_ result: BenchResult) -> [WindowRow] {
        guard let steps = result.steps, let schedule = result.options.schedule else { return [] }
        return rows(steps, total: result.seconds) { start, seconds in
            schedule.rate(atSecond: schedule.kind == .step ? start : start + seconds / 2)
        }
    }

    /// The time windows over the measured window, with the target rate of an open loop.
    static func timelineRows(_ result: BenchResult) -> [WindowRow] {
        let options = result.options
        return rows(result.timeline, total: result.seconds) { start, seconds in
            if let schedule = options.schedule { return schedule.rate(atSecond: start + seconds / 2) }
            return options.rate
        }
    }

    private static func rows(_ series: TimeSeries, total: Double, target: (Double, Double) -> Double?) -> [WindowRow] {
        let width = series.widthSeconds
        return series.windows.enumerated().compactMap { index, window in
            let start = Double(index) * width
            let seconds = min(width, total - start)
            guard seconds > 0.000_5 else { return nil }
            return WindowRow(index: index, start: start, seconds: seconds, target: target(start, seconds), window: window)
        }
    }

    /// The text report's table of steps (empty without a load schedule).
    static func stepLines(_ result: BenchResult) -> [String] {
        let rows = stepRows(result)
        guard !rows.isEmpty else { return [] }
        var lines = ["", "  steps   from     target/s    calls/s      calls   errors      p50      p99      max"]
        for row in rows {
            lines.append("  " + Format.padLeft(String(row.index + 1), 5) + Format.padLeft(Format.seconds(row.start), 7)
                + Format.padLeft(row.target.map { Format.grouped(Int($0.rounded())) } ?? "-", 13)
                + Format.padLeft(Format.fixed(row.callsPerSecond, digits: 1), 11)
                + Format.padLeft(Format.grouped(row.window.calls), 11) + Format.padLeft(Format.grouped(row.window.errors), 9)
                + latencyCells(row.window.latency).map { Format.padLeft($0, 9) }.joined())
        }
        lines.append("")
        return lines
    }

    /// A window's p50, p99 and max for the steps tables; "-" for each when no call in it was
    /// answered (an empty histogram's zeros are not a measurement).
    static func latencyCells(_ latency: some LatencySummary) -> [String] {
        guard latency.totalCount > 0 else { return ["-", "-", "-"] }
        return [latency.value(atPercentile: 50), latency.value(atPercentile: 99), latency.max]
            .map { Format.latency(Double($0)) }
    }

    /// One line on what became of the run's data.
    public static func cleanupText(_ cleanup: CleanupReport, server: BenchAddress) -> String {
        if cleanup.kept {
            return "kept \(cleanup.created) (--keep-data); delete with: \(cleanup.cleanUpCommand(server: server))"
        }
        let deleted = "deleted \(Format.grouped(cleanup.deletedLocations)) locations and "
            + "\(Format.grouped(cleanup.deletedMeals)) meal records named \(cleanup.prefix)…"
        guard let failure = cleanup.failure else { return deleted }
        return "could not delete everything (\(failure)); left: some of \(cleanup.created); "
            + "delete with: \(cleanup.cleanUpCommand(server: server))"
    }

    static func cleanupJSON(_ cleanup: CleanupReport, server: BenchAddress) -> [String: Any] {
        [
            "prefix": cleanup.prefix, "created": cleanup.created, "kept": cleanup.kept,
            "deleted_locations": cleanup.deletedLocations, "deleted_meal_records": cleanup.deletedMeals,
            "failure": cleanup.failure.map { $0 as Any } ?? NSNull(),
            "clean_up_command": cleanup.kept || cleanup.failure != nil
                ? cleanup.cleanUpCommand(server: server) as Any : NSNull(),
        ]
    }

    static func scheduleJSON(_ schedule: LoadSchedule) -> [String: Any] {
        ["kind": schedule.kind.rawValue, "start": schedule.start, "step": schedule.step,
         "step_s": schedule.stepSeconds, "end": schedule.end.map { $0 as Any } ?? NSNull()]
    }

    static func coarseJSON(_ histogram: CoarseHistogram) -> [String: Any] {
        ["p50": histogram.value(atPercentile: 50), "p90": histogram.value(atPercentile: 90),
         "p99": histogram.value(atPercentile: 99), "max": histogram.max]
    }
}

extension BenchReport {
    /// The report in `format`.
    public static func render(_ result: BenchResult, format: ReportFormat) -> String {
        switch format {
        case .text: return text(result)
        case .json: return json(result)
        case .csv: return CSVReport.render(result)
        case .html: return HTMLReport.render(result)
        }
    }
}
