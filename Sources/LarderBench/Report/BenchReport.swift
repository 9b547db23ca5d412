import Foundation
import LarderWire

/// Renders a `BenchResult` as a text report or one JSON document.
public enum BenchReport {
    /// The percentiles every report lists, with their JSON key suffixes.
    static let percentiles: [(value: Double, key: String, label: String)] = [
        (50, "p50", "p50"), (90, "p90", "p90"), (99, "p99", "p99"), (99.9, "p999", "p99.9"),
        (99.99, "p9999", "p99.99"),
    ]

    /// A human report: counts, rate, latency percentiles, CPU use and a histogram chart.
    public static func text(_ result: BenchResult) -> String {
        let options = result.options
        var lines: [String] = []
        let load = options.schedule.map { "open loop, \($0.description), at most \(options.concurrency) in flight" }
            ?? options.rate.map { "open loop at \(Format.grouped(Int($0))) calls/s, at most \(options.concurrency) in flight" }
            ?? "\(options.concurrency) in flight"
        lines.append("larder bench: \(workloadText(options)) against \(options.server)"
            + (options.transport == .lean ? "" : ", \(options.transport.label)") + (options.tls == nil ? "" : " over TLS")
            + ", \(options.connections) "
            + "connection\(options.connections == 1 ? "" : "s"), \(load), \(options.threads) thread"
            + "\(options.threads == 1 ? "" : "s")")
        lines.append("  window       \(Format.fixed(result.seconds, digits: 2))s after \(Format.seconds(options.warmupSeconds)) warm-up"
            + (result.seeded.isEmpty ? "" : " (created \(result.seeded.joined(separator: ", ")))"))
        if result.interrupted { lines.append("  interrupted  by Ctrl-C or SIGTERM: the numbers cover the calls made until then") }
        if let tls = result.tls { lines.append("  tls          " + tlsText(tls)) }
        lines.append("  calls        \(Format.grouped(result.calls)), \(Format.grouped(result.errors)) errors")
        lines.append("  calls/s      \(Format.fixed(result.callsPerSecond, digits: 1))")
        lines.append("  latency      " + latencyText(result.latency))
        if let uncorrected = result.uncorrectedLatency {
            lines.append("  (from send)  " + latencyText(uncorrected))
            lines.append("               latency above is from each call's intended start (coordinated omission corrected)")
        }
        for (workload, stats) in sortedWorkloads(result) {
            let latency = stats.latency.totalCount == 0 ? "latency \(noLatency)"
                : "p50 \(Format.latency(Double(stats.latency.value(atPercentile: 50)))), "
                + "p99 \(Format.latency(Double(stats.latency.value(atPercentile: 99)))), max \(Format.latency(Double(stats.latency.max)))"
            lines.append("  " + Format.padRight(workload.rawValue, 13) + "\(Format.grouped(stats.calls)) calls, "
                + "\(Format.grouped(stats.errors)) errors, " + latency)
        }
        var cpu = "  bench CPU    "
        if let perCall = result.benchCPUMicrosecondsPerCall {
            cpu += "\(Format.fixed(perCall, digits: 2)) µs/call, "
        }
        lines.append(cpu + "\(Format.fixed(result.benchCPUPercent, digits: 1))% of a core")
        if let serverPercent = result.serverCPUPercent {
            var server = "  server CPU   \(Format.fixed(serverPercent, digits: 1))% of a core"
            if let perCall = result.serverCPUMicrosecondsPerCall { server += ", \(Format.fixed(perCall, digits: 2)) µs/call" }
            lines.append(server)
        }
        for (code, count) in result.callsByCode.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where code != .ok {
            let message = result.firstMessages[code].map { $0.isEmpty ? "" : " (first: \(SafeText.message($0)))" } ?? ""
            lines.append("  error        \(code.name) × \(Format.grouped(count))\(message)")
        }
        if let failure = result.stopReason { lines.append("  stopped      \(SafeText.escaped(failure))") }
        if result.lostCalls > 0 { lines.append("  lost         \(Format.grouped(result.lostCalls)) calls in flight on failed connections") }
        if result.unsentCalls > 0 {
            lines.append("  unsent       \(Format.grouped(result.unsentCalls)) scheduled calls never sent: every slot was waiting "
                         + "for a reply (the server did not keep up with --rate, or stalled); each is in the overall "
                         + "latencies with its wait until the end, a lower bound")
        }
        if let limit = result.serverStreamLimit {
            lines.append("  streams      the server allows \(Format.grouped(limit)) calls at once per connection: "
                         + "\(Format.grouped(result.callsAboveStreamLimit)) of the \(Format.grouped(result.options.concurrency)) "
                         + "in flight waited in the bench for a stream, and that wait is in the latency (add --connections)")
        }
        for failure in Set(result.connectionFailures).sorted() { lines.append("  connection   \(failure)") }
        lines += stepLines(result)
        if let cleanup = result.cleanup { lines.append("  data         " + cleanupText(cleanup, server: options.server)) }
        let chart = HistogramChart(result.latency).render()
        if !chart.isEmpty {
            lines.append("")
            lines.append("  latency histogram")
            lines += chart
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One JSON document with every number of the report; keys are listed in `--help`.
    public static func json(_ result: BenchResult) -> String {
        let options = result.options
        var mix: [String: Any] = [:]
        for (workload, weight) in options.mix.weights { mix[workload.rawValue] = weight }
        var errors: [String: Any] = [:]
        for (code, count) in result.callsByCode where code != .ok { errors[code.name] = count }
        var messages: [String: Any] = [:]
        for (code, message) in result.firstMessages { messages[code.name] = message }
        var document: [String: Any] = [
            "workload": options.workload.rawValue,
            "call": options.call.map { ["method": $0.path, "data": $0.template.text] as [String: Any] as Any } ?? NSNull(),
            "load_schedule": options.schedule.map { scheduleJSON($0) as Any } ?? NSNull(),
            "steps": stepRows(result).map { row in
                ["index": row.index, "start_s": row.start, "seconds": row.seconds,
                 "target_rate": row.target.map { $0 as Any } ?? NSNull(), "calls": row.window.calls,
                 "errors": row.window.errors, "calls_per_s": row.callsPerSecond,
                 "latency_us": coarseJSON(row.window.latency)] as [String: Any]
            },
            "timeline": ["window_s": result.timeline.widthSeconds,
                         "windows": timelineRows(result).map { row in
                             ["start_s": row.start, "calls": row.window.calls, "errors": row.window.errors,
                              "calls_per_s": row.callsPerSecond, "latency_us": coarseJSON(row.window.latency)]
                                 as [String: Any]
                         }] as [String: Any],
            "interrupted": result.interrupted,
            "data": result.cleanup.map { cleanupJSON($0, server: options.server) as Any } ?? NSNull(),
            "mix": mix,
            "server": options.server.description,
            "protocol": options.transport.rawValue,
            "tls": result.tls.map { tls in
                ["version": tls.version, "alpn": tls.alpn.map { $0 as Any } ?? NSNull(), "handshakes": tls.handshakes,
                 "resumed": tls.resumed] as [String: Any] as Any
            } ?? NSNull(),
            "connections": options.connections,
            "concurrency": options.concurrency,
            "threads": options.threads,
            "rate": options.rate.map { $0 as Any } ?? NSNull(),
            "warmup_s": options.warmupSeconds,
            "seconds": result.seconds,
            "seeded": result.seeded,
            "calls": result.calls,
            "ok": result.callsByCode[.ok] ?? 0,
            "errors": result.errors,
            "errors_by_code": errors,
            "first_error_messages": messages,
            "lost_calls": result.lostCalls,
            "unsent_calls": result.unsentCalls,
            "server_stream_limit": result.serverStreamLimit.map { $0 as Any } ?? NSNull(),
            "calls_above_stream_limit": result.callsAboveStreamLimit,
            "by_workload": Dictionary(uniqueKeysWithValues: sortedWorkloads(result).map { workload, stats in
                (workload.rawValue, ["calls": stats.calls, "errors": stats.errors,
                                     "latency_us": latencyJSON(stats.latency)] as [String: Any])
            }),
            "connection_failures": result.connectionFailures,
            "calls_per_s": result.callsPerSecond,
            "latency_us": latencyJSON(result.latency),
            "latency_uncorrected_us": result.uncorrectedLatency.map { latencyJSON($0) as Any } ?? NSNull(),
            "histogram": HistogramChart(result.latency).rows.map {
                ["from_us": $0.lower, "to_us": $0.upper, "count": $0.count] as [String: Any]
            },
            "bench_cpu_us_per_call": result.benchCPUMicrosecondsPerCall.map { $0 as Any } ?? NSNull(),
            "bench_cpu_pct": result.benchCPUPercent,
            "server_cpu_pct": result.serverCPUPercent.map { $0 as Any } ?? NSNull(),
            "server_cpu_us_per_call": result.serverCPUMicrosecondsPerCall.map { $0 as Any } ?? NSNull(),
        ]
        document["stopped_by"] = result.stopReason.map { $0 as Any } ?? NSNull()
        guard let data = try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]),
              let text = String(data: data, encoding: .utf8)
        else { return "{}\n" }
        return escapingC1(text) + "\n"
    }

    /// `json` with C1 controls written as `\u009b`: JSONSerialization escapes C0 only, and the
    /// server's messages in the report could hold U+009B, a terminal's CSI. Outside strings JSON
    /// text is ASCII, so every C1 scalar is inside a string, where the escape means the same.
    static func escapingC1(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) else { return json }
        var out = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            if (0x80...0x9F).contains(scalar.value) {
                out.append(contentsOf: "\\u00\(String(scalar.value, radix: 16))".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    static func latencyJSON(_ histogram: LatencyHistogram) -> [String: Any] {
        var values: [String: Any] = [
            "count": histogram.totalCount,
            "min": histogram.min,
            "mean": histogram.mean,
            "max": histogram.max,
            "stddev": histogram.standardDeviation,
        ]
        for percentile in percentiles { values[percentile.key] = histogram.value(atPercentile: percentile.value) }
        return values
    }

    /// What the latency lines say when no call was answered: no measured zeros (audit 27 L8).
    static let noLatency = "- (no call was answered)"

    private static func latencyText(_ histogram: LatencyHistogram) -> String {
        guard histogram.totalCount > 0 else { return noLatency }
        var parts = ["mean \(Format.latency(histogram.mean))"]
        for percentile in percentiles {
            parts.append("\(percentile.label) \(Format.latency(Double(histogram.value(atPercentile: percentile.value))))")
        }
        parts.append("max \(Format.latency(Double(histogram.max)))")
        return parts.joined(separator: "  ")
    }

    /// `TLSv1.3, ALPN h2, 4 handshakes (3 resumed)`.
    static func tlsText(_ tls: TLSSummary) -> String {
        "\(tls.version), ALPN \(tls.alpn ?? "none"), \(Format.grouped(tls.handshakes)) handshake"
            + "\(tls.handshakes == 1 ? "" : "s") (\(Format.grouped(tls.resumed)) resumed)"
    }

    static func sortedWorkloads(_ result: BenchResult) -> [(Workload, WorkloadStats)] {
        result.options.mix.workloads.compactMap { workload in result.byWorkload[workload].map { (workload, $0) } }
    }

    static func workloadText(_ options: BenchOptions) -> String {
        if let call = options.call { return "call \(call.path)" }
        return options.workload == .mix ? "mix \(options.mix.description)" : options.workload.rawValue
    }
}
