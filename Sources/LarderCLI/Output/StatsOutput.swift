public import LarderAPI
import LarderBench
import LarderWire

/// `larder stats` as text: a summary line and one row per method.
public enum StatsOutput {
    public static func render(_ metrics: Metrics, _ localTime: LocalTime, width: Int? = nil) -> String {
        var text = ""
        if let start = metrics.startTime { text += "Started      \(localTime.format(Timestamp(seconds: start.seconds)))\n" }
        text += "Connections  \(count(metrics.connectionsOpen)) open, \(count(metrics.connectionsAccepted)) accepted\n"
        text += "Calls        \(count(metrics.callsInFlight)) in flight, "
            + "\(count(metrics.methods.reduce(0) { $0 + $1.totalCalls })) finished\n"
        text += "Bytes        \(bytes(metrics.bytesReceived)) received, \(bytes(metrics.bytesSent)) sent\n"
        text += "Held         \(bytes(UInt64(max(metrics.memoryHeldBytes, 0)))) for peers, "
            + "\(count(metrics.callsParked)) calls waiting for replies to be read (\(count(metrics.callsParkedTotal)) since start)\n\n"
        // A method whose only calls are in flight (this very GetMetrics, on a fresh server) has no row yet.
        let methods = metrics.methods.filter { $0.totalCalls > 0 }
        if methods.isEmpty { return text + "No calls yet.\n" }
        let columns: [TableRenderer.Column] = [
            .init("METHOD", shrinksTo: 24, truncation: .middle), .init("CALLS", .right), .init("ERRORS", .right), .init("AVG", .right),
            .init("P50", .right), .init("P99", .right), .init("CODES", shrinksTo: 10),
        ]
        let rows = methods.map { method -> [String] in
            let total = method.totalCalls
            let errors = total - (method.callsByCode["OK"] ?? 0)
            let codes = method.callsByCode
                .sorted { (StatusCode(name: $0.key)?.rawValue ?? .max) < (StatusCode(name: $1.key)?.rawValue ?? .max) }
                .map { "\($0.key) \(count($0.value))" }.joined(separator: "; ")
            let average = total > 0 ? duration(method.latencySumSeconds / Double(total)) : "-"
            return [method.method, count(total), count(errors), average,
                    quantile(0.5, method, metrics.latencyBoundsSeconds),
                    quantile(0.99, method, metrics.latencyBoundsSeconds), codes]
        }
        text += TableRenderer(columns: columns, rows: rows, maxWidth: width).render()
        return text + "P50/P99 are histogram bucket upper bounds (≤).\n"
    }

    /// The upper bound of the bucket holding quantile `q`: `≤1ms`; `>10s` in the +Inf bucket.
    static func quantile(_ q: Double, _ method: MethodMetrics, _ bounds: [Double]) -> String {
        let total = method.latencyBucketCounts.reduce(0, +)
        guard total > 0 else { return "-" }
        let rank = UInt64((q * Double(total)).rounded(.up))
        var cumulative: UInt64 = 0
        for (index, count) in method.latencyBucketCounts.enumerated() {
            cumulative += count
            if cumulative >= max(rank, 1) {
                return index < bounds.count ? "≤" + duration(bounds[index]) : ">" + duration(bounds.last ?? 0)
            }
        }
        return "-"
    }

    /// `250µs`, `2.5ms`, `1.2s`.
    static func duration(_ seconds: Double) -> String {
        if seconds < 0.001 { return trimmed(seconds * 1e6) + "µs" }
        if seconds < 1 { return trimmed(seconds * 1e3) + "ms" }
        return trimmed(seconds) + "s"
    }

    /// A count with thousands separators, as the bench prints them: `339,775`.
    static func count(_ value: some BinaryInteger) -> String {
        Format.grouped(Int(clamping: value))
    }

    /// `1.5 KiB`, `3 B`.
    static func bytes(_ count: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : "\(trimmed(value)) \(units[unit])"
    }

    /// At most one decimal, none when whole: `2.5`, `250`.
    static func trimmed(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int64(tenths)) : String(tenths)
    }
}
