import LarderAPI

/// `larder stats`: the server's metrics (Admin/GetMetrics).
enum StatsCommand {
    static let spec = CommandSpec(
        resource: nil, name: "stats",
        summary: "Show the server's metrics: calls per method and status, latency, connections, bytes",
        examples: ["larder stats", "larder stats --json"],
        printsIDs: false
    ) { _, context throws(CLIError) in
        let metrics = try await context.call(AdminMethods.getMetrics, GetMetricsRequest())
        try context.emit(metrics) { StatsOutput.render(metrics, context.localTime, width: context.tableWidth) }
    }
}
