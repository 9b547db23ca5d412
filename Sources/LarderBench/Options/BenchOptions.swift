public import LarderClient

/// Everything a bench run needs to know, parsed from the command line.
public struct BenchOptions: Sendable, Equatable {
    public var server = BenchAddress.defaultAddress
    public var workload = Workload.ping
    /// The weights for `.mix`; a single workload otherwise.
    public var mix = WorkloadMix(single: .ping)
    /// What the load is sent over (`--protocol`); seeding and clean-up use the lean protocol.
    public var transport = BenchTransport.lean
    /// `--tls`: every connection does its own TLS handshake (ALPN `larder` or `h2`); nil = cleartext.
    public var tls: ClientTLS?
    /// TCP connections (never more than `concurrency`).
    public var connections = 4
    /// Calls in flight in total, spread over the connections.
    public var concurrency = 64
    /// Event-loop threads, each owning some of the connections.
    public var threads = 1
    /// Measured seconds, when `requests` is nil.
    public var durationSeconds = 10.0
    /// Measured calls; when set the run ends after this many (or at `timeLimitSeconds`).
    public var requests: Int?
    /// Seconds of traffic before measuring starts.
    public var warmupSeconds = 1.0
    /// Open loop: calls per second on a constant schedule; nil = closed loop.
    public var rate: Double?
    /// Hard cap on warm-up + measurement, whatever else is asked.
    public var timeLimitSeconds = 60.0
    /// How long opening one connection (and its TLS handshake) may take: `--connect-timeout`,
    /// else `LARDER_TIMEOUT` (as for every `larder` command).
    public var connectTimeoutSeconds = 10.0
    /// Open loop under a ramp (`--load-schedule step|line`); `rate` is nil then.
    public var schedule: LoadSchedule?
    /// How the report is written (`--format`; `--json` is `.json`).
    public var format = ReportFormat.text
    /// Write the report to this file instead of stdout (`--output`).
    public var outputPath: String?
    /// Keep what the run created instead of deleting it afterwards (`--keep-data`).
    public var keepData = false
    /// `--call`: any method, with a templated JSON request.
    public var call: CallSpec?
    /// Call metadata sent with every call (`--metadata`), besides the token.
    public var metadata: [MetadataEntry] = []
    /// Write the percentile spectrum to this file.
    public var histogramOutputPath: String?
    /// Sent as `authorization: Bearer TOKEN` metadata.
    public var token: String?
    /// Report this process's CPU use over the measurement window.
    public var serverPID: Int32?
    /// Locations created before a `get` run.
    public var seedLocations = 1000
    /// Meal records created before a `list` run.
    public var seedMeals = 500

    public init() {}

    /// Print one JSON document instead of the text report (`--json`, the same as `--format json`).
    public var json: Bool {
        get { format == .json }
        set { format = newValue ? .json : .text }
    }

    /// Whether calls follow an arrival schedule (`--rate` or `--load-schedule`).
    public var isOpenLoop: Bool { rate != nil || schedule != nil }

    /// The workloads whose calls this run makes.
    public var activeWorkloads: [Workload] { mix.workloads }
}
