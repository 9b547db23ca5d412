import LarderSystem
import LarderWire

/// Creates the data a run needs and encodes the request payloads to pick from.
enum RequestCatalog {
    /// One workload's calls: the method, fixed payloads to pick from, or a generator for each call.
    struct Group {
        var workload: Workload
        var method: String
        var payloads: [[UInt8]]
        var generator: PayloadGenerator?
    }

    /// Method path and payloads per workload in `mix`; `seeded` says what was created.
    struct Prepared {
        var groups: [Group]
        var seeded: [String]
    }

    /// Seeds data over one connection to `options.server` (telling stderr) and encodes the payloads;
    /// everything created is named under `data.prefix` and recorded in `data` as it arrives.
    /// - Throws: the error of the first call that failed while creating data; CANCELLED when cancelled.
    static func prepare(_ options: BenchOptions, data: CreatedData, cancellation: BenchCancellation? = nil,
                        notify: (String) -> Void) throws(RPCError) -> Prepared
    {
        var builder = Builder(options: options, data: data, cancellation: cancellation)
        for workload in options.activeWorkloads {
            try builder.addGroup(for: workload, notify: notify)
        }
        return builder.prepared
    }
}
