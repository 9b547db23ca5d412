/// The forms of the report (`--format`).
public enum ReportFormat: String, Sendable, CaseIterable {
    /// The human report with a histogram drawn in block characters.
    case text
    /// One JSON document; the keys are listed in `--help`.
    case json
    /// One table: the total, each workload, each step and each time window.
    case csv
    /// One self-contained HTML page with inline SVG charts.
    case html
}
