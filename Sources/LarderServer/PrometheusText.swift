import LarderAPI
import LarderWire

/// Renders a metrics snapshot in the Prometheus text exposition format 0.0.4.
enum PrometheusText {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static func render(_ metrics: Metrics) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        family("larder_calls_total", "counter", "Calls finished, by full method name and gRPC status code.")
        for method in metrics.methods {
            let codes = method.callsByCode.sorted {
                (StatusCode(name: $0.key)?.rawValue ?? .max, $0.key) < (StatusCode(name: $1.key)?.rawValue ?? .max, $1.key)
            }
            for (code, count) in codes {
                out += "larder_calls_total{method=\"\(escape(method.method))\",code=\"\(escape(code))\"} \(count)\n"
            }
        }
        family("larder_call_duration_seconds", "histogram",
               "Time from reading a call's frame to handing its reply to the connection.")
        for method in metrics.methods {
            let label = "method=\"\(escape(method.method))\""
            var cumulative: UInt64 = 0
            for (index, count) in method.latencyBucketCounts.enumerated() {
                cumulative += count
                let bound = index < metrics.latencyBoundsSeconds.count ? seconds(metrics.latencyBoundsSeconds[index]) : "+Inf"
                out += "larder_call_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "larder_call_duration_seconds_sum{\(label)} \(method.latencySumSeconds)\n"
            out += "larder_call_duration_seconds_count{\(label)} \(cumulative)\n"
        }
        family("larder_calls_in_flight", "gauge", "Calls read but not yet answered.")
        out += "larder_calls_in_flight \(metrics.callsInFlight)\n"
        family("larder_connections_open", "gauge", "Client connections open now.")
        out += "larder_connections_open \(metrics.connectionsOpen)\n"
        family("larder_connections_accepted_total", "counter", "Client connections accepted since start.")
        out += "larder_connections_accepted_total \(metrics.connectionsAccepted)\n"
        family("larder_received_bytes_total", "counter", "Bytes read from client connections.")
        out += "larder_received_bytes_total \(metrics.bytesReceived)\n"
        family("larder_sent_bytes_total", "counter", "Bytes written to client connections.")
        out += "larder_sent_bytes_total \(metrics.bytesSent)\n"
        if let start = metrics.startTime {
            family("larder_start_time_seconds", "gauge", "When the server started, in seconds since the Unix epoch.")
            out += "larder_start_time_seconds \(start.seconds)\n"
        }
        return out
    }

    /// A bucket bound as plain decimal seconds (`0.00005`, `2.5`, `10`), from its nanoseconds.
    static func seconds(_ value: Double) -> String {
        let nanos = Int64((value * 1e9).rounded())
        let whole = nanos / 1_000_000_000
        var fraction = String(nanos % 1_000_000_000)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }

    /// A label value with `\`, `"` and newlines escaped.
    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
