import LarderAPI
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// The server's counters: calls started, calls finished by method and status
/// code, latency histograms, connections and bytes.
///
/// Confined to the event-loop thread (hence `@unchecked Sendable`): every
/// call finishes there (replies are delivered by the loop), so recording is a
/// few plain integer additions into one preallocated buffer — no atomics, no
/// lock, no array copy-on-write checks (about 5 ns per call, measured with
/// -O). Other threads read a `snapshot()` by running it on the loop.
final class MetricsRecorder: @unchecked Sendable {
    /// Upper bounds of the latency buckets in nanoseconds: 50 µs to 10 s; a last bucket is +Inf.
    /// From 5 ms on they are Prometheus's default buckets (what go-grpc-prometheus uses),
    /// so a dashboard that names one of those `le` values finds it here too.
    static let boundsNanoseconds: [UInt64] = [
        50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000,
        50_000_000, 100_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000,
        10_000_000_000,
    ]
    /// The method name calls to unserved methods are counted under.
    static let unknownMethod = "unknown"
    /// One slot per canonical status code (0-16), then one for any other code.
    private static let codeSlots = 18
    private static let bucketSlots = boundsNanoseconds.count + 1
    /// Per method: code counts, bucket counts, latency sum, calls started.
    private static let sumSlot = codeSlots + bucketSlots
    private static let startedSlot = sumSlot + 1
    private static let rowSlots = startedSlot + 1

    /// Full method names by index; the last is `unknownMethod`.
    let methodPaths: [String]
    private let indexByPath: [String: Int]
    /// Wall-clock start time, for `start_time`.
    let startTime: Timestamp

    private let rows: UnsafeMutablePointer<UInt64>
    private let bounds: UnsafeMutablePointer<UInt64>
    private let boundCount = boundsNanoseconds.count
    /// connections accepted, bytes received, bytes sent.
    private let totals: UnsafeMutablePointer<UInt64>
    /// What the server holds now, read from it when a snapshot is taken.
    struct Gauges {
        var connectionsOpen = 0
        var callsInFlight = 0
        /// The memory budget's use (`MemoryBudget.usedBytes`).
        var memoryHeldBytes = 0
        /// Calls waiting for their connection to read its replies, and such waits since start.
        var callsParked = 0
        var callsParkedTotal: UInt64 = 0
    }

    /// The server's gauges, read when a snapshot is taken.
    var gauges: () -> Gauges = { Gauges() }

    init(methodPaths: [String]) {
        let paths = methodPaths + [Self.unknownMethod]
        self.methodPaths = paths
        self.indexByPath = Dictionary(paths.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        rows = .allocate(capacity: paths.count * Self.rowSlots)
        rows.initialize(repeating: 0, count: paths.count * Self.rowSlots)
        bounds = .allocate(capacity: Self.boundsNanoseconds.count)
        bounds.initialize(from: Self.boundsNanoseconds, count: Self.boundsNanoseconds.count)
        totals = .allocate(capacity: 3)
        totals.initialize(repeating: 0, count: 3)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        startTime = Timestamp(seconds: Int64(now.tv_sec), nanos: Int32(now.tv_nsec))
    }

    deinit {
        rows.deallocate()
        bounds.deallocate()
        totals.deallocate()
    }

    /// The index of the method `path`, or that of `unknownMethod`.
    func index(of path: String) -> Int { indexByPath[path] ?? methodPaths.count - 1 }

    /// Counts one call of method `index` read from a connection; `record` counts it again when it finishes.
    func started(method index: Int) {
        precondition(index >= 0 && index < methodPaths.count, "metrics index out of range")
        rows[index * Self.rowSlots + Self.startedSlot] &+= 1
    }

    /// Counts one finished call of method `index` with `code`, which took `nanoseconds`.
    func record(method index: Int, code: StatusCode, nanoseconds: UInt64) {
        precondition(index >= 0 && index < methodPaths.count, "metrics index out of range")
        let row = rows + index * Self.rowSlots
        let slot = (0...16).contains(code.rawValue) ? Int(code.rawValue) : Self.codeSlots - 1
        row[slot] &+= 1
        var bucket = 0
        while bucket < boundCount && nanoseconds > bounds[bucket] { bucket += 1 }
        row[Self.codeSlots + bucket] &+= 1
        row[Self.sumSlot] &+= nanoseconds
    }

    func connectionAccepted() { totals[0] &+= 1 }
    func received(_ byteCount: Int) { totals[1] &+= UInt64(byteCount) }
    func sent(_ byteCount: Int) { totals[2] &+= UInt64(byteCount) }

    /// Bytes written to peers so far (`/metrics`' bytes sent).
    var bytesSent: UInt64 { totals[2] }
    /// Bytes read from peers so far (`/metrics`' bytes received).
    var bytesReceived: UInt64 { totals[1] }

    /// Connections accepted, bytes received and bytes sent so far, added up: it changes
    /// whenever a peer connects, sends or is answered (`Server.returnMemoryWhenQuiet`).
    var trafficCount: UInt64 { totals[0] &+ totals[1] &+ totals[2] }

    /// Every counter now, for `Admin/GetMetrics` and `/metrics`. Methods never called are left out.
    func snapshot() -> Metrics {
        let gauges = gauges()
        var methods: [MethodMetrics] = []
        for (index, path) in methodPaths.enumerated() {
            let row = UnsafeBufferPointer(start: rows + index * Self.rowSlots, count: Self.rowSlots)
            let codes = row[0..<Self.codeSlots]
            guard row[Self.startedSlot] > 0 || codes.contains(where: { $0 > 0 }) else { continue }
            var byCode: [String: UInt64] = [:]
            for (slot, count) in codes.enumerated() where count > 0 {
                byCode[slot < Self.codeSlots - 1 ? StatusCode(rawValue: Int32(slot)).name : "OTHER"] = count
            }
            methods.append(MethodMetrics(
                method: path, callsByCode: byCode,
                latencyBucketCounts: Array(row[Self.codeSlots..<Self.sumSlot]),
                latencySumSeconds: Double(row[Self.sumSlot]) / 1e9, callsStarted: row[Self.startedSlot]))
        }
        methods.sort { $0.method < $1.method }
        return Metrics(
            startTime: startTime, connectionsOpen: Int64(gauges.connectionsOpen),
            connectionsAccepted: totals[0], callsInFlight: Int64(gauges.callsInFlight),
            bytesReceived: totals[1], bytesSent: totals[2],
            latencyBoundsSeconds: Self.boundsNanoseconds.map { Double($0) / 1e9 }, methods: methods,
            memoryHeldBytes: Int64(gauges.memoryHeldBytes), callsParked: Int64(gauges.callsParked),
            callsParkedTotal: gauges.callsParkedTotal)
    }
}
