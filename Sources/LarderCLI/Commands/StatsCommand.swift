import LarderAPI
import LarderJSON
import LarderWire

/// `larder stats`: the server's metrics (Admin/GetMetrics).
enum StatsCommand {
    static let spec = CommandSpec(
        resource: nil, name: "stats",
        summary: "Show the server's metrics: calls per method and status, latency, connections, bytes",
        examples: ["larder stats", "larder stats --json"]
    ) { _, context throws(CLIError) in
        let metrics = try await context.call(AdminMethods.getMetrics, GetMetricsRequest())
        try ReflectionCommands.emit(metrics, context) { StatsOutput.render(metrics, context.localTime) }
    }
}
