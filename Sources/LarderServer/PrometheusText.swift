import LarderAPI
import LarderWire

/// Renders a metrics snapshot in the Prometheus text exposition format 0.0.4.
///
/// The `grpc_server_*` families are those of the grpc-ecosystem go-grpc-prometheus
/// middleware (names, help, labels, `grpc_code` spelling), pre-initialized for every
/// served method as its `InitializeMetrics` does; `larder_*` covers what they do not;
/// `larder_build_info` and the `process_*` metrics are the usual ones of client libraries.
enum PrometheusText {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `grpc_code` values by code number: Go's `codes.Code.String()`.
    static let grpcCodeNames = [
        "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
        "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
        "Internal", "Unavailable", "DataLoss", "Unauthenticated",
    ]

    /// The page for `/metrics`: every served method (`types`: each one's `grpc_type`, see
    /// `Router.grpcTypes`), this build, this process now.
    static func render(_ metrics: Metrics, types: [String: String]) -> String {
        render(metrics, served: LarderServices.methodPaths, types: types, build: .thisBuild(), process: ProcessMetrics.read())
    }

    /// The page for `metrics`, with a series for each of `served` (full method names); a
    /// method missing from `types` is `unary`.
    static func render(_ metrics: Metrics, served: [String], types: [String: String] = [:], build: ServerInfo,
                       process: ProcessMetrics?) -> String {
        var page = Page()
        let byPath = Dictionary(metrics.methods.map { ($0.method, $0) }, uniquingKeysWith: { first, _ in first })
        let methods = served.sorted().map { path in
            (labels: grpcLabels(path, type: types[path] ?? "unary"), counts: byPath[path] ?? MethodMetrics(method: path))
        }

        page.family("grpc_server_started_total", "counter", "Total number of RPCs started on the server.")
        for method in methods { page.sample("grpc_server_started_total", method.labels, method.counts.callsStarted) }
        page.family("grpc_server_handled_total", "counter",
                    "Total number of RPCs completed on the server, regardless of success or failure.")
        for method in methods {
            for (code, count) in zip(grpcCodeNames, grpcCodeCounts(method.counts)) {
                page.sample("grpc_server_handled_total", method.labels + [("grpc_code", code)], count)
            }
        }
        // A unary call receives its one request message when it starts, and sends its one
        // reply message when it succeeds (go-grpc-prometheus counts them so).
        page.family("grpc_server_msg_received_total", "counter", "Total number of RPC stream messages received on the server.")
        for method in methods { page.sample("grpc_server_msg_received_total", method.labels, method.counts.callsStarted) }
        page.family("grpc_server_msg_sent_total", "counter", "Total number of gRPC stream messages sent by the server.")
        for method in methods {
            page.sample("grpc_server_msg_sent_total", method.labels, method.counts.callsByCode[StatusCode.ok.name] ?? 0)
        }
        page.family("grpc_server_handling_seconds", "histogram",
                    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.")
        for method in methods {
            var cumulative: UInt64 = 0
            for (index, bound) in metrics.latencyBoundsSeconds.enumerated() {
                cumulative += index < method.counts.latencyBucketCounts.count ? method.counts.latencyBucketCounts[index] : 0
                page.sample("grpc_server_handling_seconds_bucket", method.labels + [("le", number(bound))], cumulative)
            }
            let count = method.counts.latencyBucketCounts.reduce(0, +)
            page.sample("grpc_server_handling_seconds_bucket", method.labels + [("le", "+Inf")], count)
            page.sample("grpc_server_handling_seconds_sum", method.labels, number(method.counts.latencySumSeconds))
            page.sample("grpc_server_handling_seconds_count", method.labels, count)
        }

        page.family("larder_unknown_method_calls_total", "counter",
                    "Calls naming a method the server does not serve (not in grpc_server_*), by the code they got.")
        let unknown = byPath[MetricsRecorder.unknownMethod].map(grpcCodeCounts) ?? []
        let unimplemented = Int(StatusCode.unimplemented.rawValue)
        for (index, count) in unknown.enumerated() where count > 0 || index == unimplemented {
            page.sample("larder_unknown_method_calls_total", [("grpc_code", grpcCodeNames[index])], count)
        }
        if unknown.isEmpty {
            page.sample("larder_unknown_method_calls_total", [("grpc_code", grpcCodeNames[unimplemented])], 0)
        }
        page.family("larder_calls_in_flight", "gauge", "Calls read but not yet answered.")
        page.sample("larder_calls_in_flight", [], metrics.callsInFlight)
        page.family("larder_connections_open", "gauge", "Client connections open now.")
        page.sample("larder_connections_open", [], metrics.connectionsOpen)
        page.family("larder_memory_held_bytes", "gauge",
                    "Bytes held for peers now: unwritten replies, unanswered requests, waiting calls (--memory-budget-bytes).")
        page.sample("larder_memory_held_bytes", [], metrics.memoryHeldBytes)
        page.family("larder_parked_calls", "gauge", "Reads for the database waiting now for their connection to read its replies.")
        page.sample("larder_parked_calls", [], metrics.callsParked)
        page.family("larder_calls_parked_total", "counter",
                    "Times a read for the database waited for its connection to read its replies, since start.")
        page.sample("larder_calls_parked_total", [], metrics.callsParkedTotal)
        page.family("larder_connections_accepted_total", "counter", "Client connections accepted since start.")
        page.sample("larder_connections_accepted_total", [], metrics.connectionsAccepted)
        page.family("larder_received_bytes_total", "counter", "Bytes read from client connections.")
        page.sample("larder_received_bytes_total", [], metrics.bytesReceived)
        page.family("larder_sent_bytes_total", "counter", "Bytes written to client connections.")
        page.sample("larder_sent_bytes_total", [], metrics.bytesSent)
        page.family("larder_build_info", "gauge",
                    "A metric with a constant '1' value labeled by the version, commit and protocol of the server.")
        page.sample("larder_build_info", [("version", build.version), ("commit", build.commit),
                                          ("protocol_version", build.protocolVersion)], 1)

        if let process {
            page.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.")
            page.sample("process_cpu_seconds_total", [], number(process.cpuSeconds))
            page.family("process_open_fds", "gauge", "Number of open file descriptors.")
            page.sample("process_open_fds", [], process.openFDs)
            if let maxFDs = process.maxFDs {
                page.family("process_max_fds", "gauge", "Maximum number of open file descriptors.")
                page.sample("process_max_fds", [], maxFDs)
            }
            page.family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.")
            page.sample("process_virtual_memory_bytes", [], process.virtualMemoryBytes)
            page.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
            page.sample("process_resident_memory_bytes", [], process.residentMemoryBytes)
            page.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.")
            page.sample("process_start_time_seconds", [], number(process.startTimeSeconds))
        }
        return page.text
    }

    /// `grpc_type`, `grpc_service`, `grpc_method` of a full method name, split as
    /// go-grpc-prometheus splits it (`unknown` for both halves when there is no `/`).
    static func grpcLabels(_ path: String, type: String = "unary") -> [(String, String)] {
        let trimmed = path.hasPrefix("/") ? path.dropFirst() : Substring(path)
        guard let slash = trimmed.firstIndex(of: "/") else {
            return [("grpc_type", type), ("grpc_service", "unknown"), ("grpc_method", "unknown")]
        }
        return [("grpc_type", type), ("grpc_service", String(trimmed[..<slash])),
                ("grpc_method", String(trimmed[trimmed.index(after: slash)...]))]
    }

    /// A method's finished calls for each code 0-16; a code outside that range (which this
    /// server never sends) counts as Unknown, as gRPC clients read it.
    static func grpcCodeCounts(_ method: MethodMetrics) -> [UInt64] {
        var counts = [UInt64](repeating: 0, count: grpcCodeNames.count)
        for (name, count) in method.callsByCode {
            let code = StatusCode(name: name).map { Int($0.rawValue) } ?? Int(StatusCode.unknown.rawValue)
            counts[counts.indices.contains(code) ? code : Int(StatusCode.unknown.rawValue)] += count
        }
        return counts
    }

    /// A float as Go's client formats one (shortest round-trip form: `0.005`, `5e-05`, `10`, `+Inf`).
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
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

    /// The page being written: `# HELP` and `# TYPE` lines, then samples.
    struct Page {
        private(set) var text = ""

        mutating func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }

        mutating func sample(_ name: String, _ labels: [(String, String)], _ value: some CustomStringConvertible) {
            text += name
            if !labels.isEmpty {
                text += "{" + labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
            }
            text += " \(value)\n"
        }
    }
}
