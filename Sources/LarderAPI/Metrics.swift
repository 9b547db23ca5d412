import CLarderProto
import CProtobufC
import LarderWire

/// `larder.admin.v1.GetMetricsRequest`.
public struct GetMetricsRequest: Hashable, Sendable, ProtoMessage {
    public init() {}

    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__admin__v1__get_metrics_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        arena.message(Larder__Admin__V1__GetMetricsRequest.self) { larder__admin__v1__get_metrics_request__init($0) }
            .asMessage
    }
}

/// `larder.admin.v1.Metrics`: the server's counters since it started.
public struct Metrics: Hashable, Sendable {
    public var startTime: Timestamp?
    public var connectionsOpen: Int64
    public var connectionsAccepted: UInt64
    public var callsInFlight: Int64
    public var bytesReceived: UInt64
    public var bytesSent: UInt64
    /// Upper bounds (seconds) of the latency buckets, ascending; a last bucket is +Inf.
    public var latencyBoundsSeconds: [Double]
    /// Per method, sorted by method name.
    public var methods: [MethodMetrics]

    public init(startTime: Timestamp? = nil, connectionsOpen: Int64 = 0, connectionsAccepted: UInt64 = 0,
                callsInFlight: Int64 = 0, bytesReceived: UInt64 = 0, bytesSent: UInt64 = 0,
                latencyBoundsSeconds: [Double] = [], methods: [MethodMetrics] = []) {
        self.startTime = startTime
        self.connectionsOpen = connectionsOpen
        self.connectionsAccepted = connectionsAccepted
        self.callsInFlight = callsInFlight
        self.bytesReceived = bytesReceived
        self.bytesSent = bytesSent
        self.latencyBoundsSeconds = latencyBoundsSeconds
        self.methods = methods
    }
}

extension Metrics: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__admin__v1__metrics__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__Admin__V1__Metrics.self).pointee
        self.init(
            startTime: Timestamp?(c: c.start_time), connectionsOpen: c.connections_open,
            connectionsAccepted: c.connections_accepted, callsInFlight: c.calls_in_flight,
            bytesReceived: c.bytes_received, bytesSent: c.bytes_sent,
            latencyBoundsSeconds: c.latency_bounds_seconds.map { Array(UnsafeBufferPointer(start: $0, count: c.n_latency_bounds_seconds)) } ?? [],
            methods: try CFields.messages(c.methods, count: c.n_methods) { p throws(RPCError) in try MethodMetrics(c: p) })
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__Admin__V1__Metrics.self) { larder__admin__v1__metrics__init($0) }
        c.pointee.start_time = startTime.buildC(in: arena)
        c.pointee.connections_open = connectionsOpen
        c.pointee.connections_accepted = connectionsAccepted
        c.pointee.calls_in_flight = callsInFlight
        c.pointee.bytes_received = bytesReceived
        c.pointee.bytes_sent = bytesSent
        c.pointee.n_latency_bounds_seconds = latencyBoundsSeconds.count
        c.pointee.latency_bounds_seconds = arena.values(latencyBoundsSeconds)
        c.pointee.n_methods = methods.count
        c.pointee.methods = arena.pointers(methods) { $0.buildC(in: arena) }
        return c.asMessage
    }
}

/// `larder.admin.v1.MethodMetrics`: one method's finished calls by status and its latency histogram.
public struct MethodMetrics: Hashable, Sendable {
    /// Full method name, or `unknown` for calls to names the server does not serve.
    public var method: String
    /// Finished calls by status code name (`OK`, `NOT_FOUND`, …).
    public var callsByCode: [String: UInt64]
    /// Calls per latency bucket (not cumulative), the last being +Inf.
    public var latencyBucketCounts: [UInt64]
    public var latencySumSeconds: Double
    /// Calls read, finished or still in flight.
    public var callsStarted: UInt64

    public init(method: String, callsByCode: [String: UInt64] = [:], latencyBucketCounts: [UInt64] = [],
                latencySumSeconds: Double = 0, callsStarted: UInt64 = 0) {
        self.method = method
        self.callsByCode = callsByCode
        self.latencyBucketCounts = latencyBucketCounts
        self.latencySumSeconds = latencySumSeconds
        self.callsStarted = callsStarted
    }

    /// Finished calls, all codes together.
    public var totalCalls: UInt64 { callsByCode.values.reduce(0, +) }

    init(c: UnsafePointer<Larder__Admin__V1__MethodMetrics>) throws(RPCError) {
        let c = c.pointee
        var byCode: [String: UInt64] = [:]
        if let entries = c.calls_by_code {
            for index in 0..<c.n_calls_by_code {
                guard let entry = entries[index] else { continue }
                byCode[try CFields.string(entry.pointee.key, field: "calls_by_code key")] = entry.pointee.value
            }
        }
        self.init(
            method: try CFields.string(c.method, field: "method"), callsByCode: byCode,
            latencyBucketCounts: c.latency_bucket_counts.map { Array(UnsafeBufferPointer(start: $0, count: c.n_latency_bucket_counts)) } ?? [],
            latencySumSeconds: c.latency_sum_seconds, callsStarted: c.calls_started)
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__Admin__V1__MethodMetrics> {
        let c = arena.message(Larder__Admin__V1__MethodMetrics.self) { larder__admin__v1__method_metrics__init($0) }
        c.pointee.method = arena.string(method)
        // In status code order (OK first), names this build does not know last.
        let entries = callsByCode.sorted { (StatusCode(name: $0.key)?.rawValue ?? .max, $0.key) < (StatusCode(name: $1.key)?.rawValue ?? .max, $1.key) }
        c.pointee.n_calls_by_code = entries.count
        c.pointee.calls_by_code = arena.pointers(entries) { entry in
            let e = arena.message(Larder__Admin__V1__MethodMetrics__CallsByCodeEntry.self) {
                larder__admin__v1__method_metrics__calls_by_code_entry__init($0)
            }
            e.pointee.key = arena.string(entry.key)
            e.pointee.value = entry.value
            return e
        }
        c.pointee.n_latency_bucket_counts = latencyBucketCounts.count
        c.pointee.latency_bucket_counts = arena.values(latencyBucketCounts)
        c.pointee.latency_sum_seconds = latencySumSeconds
        c.pointee.calls_started = callsStarted
        return c
    }
}
