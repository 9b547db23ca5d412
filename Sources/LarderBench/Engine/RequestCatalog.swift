import LarderSystem
import LarderWire

/// Renders a `--call` request per call from its template (on the loop's thread).
final class PayloadGenerator: Sendable {
    let template: PayloadTemplate
    let prefix: String
    let locationIDs: [String]
    let mealIDs: [String]

    init(template: PayloadTemplate, prefix: String, locationIDs: [String], mealIDs: [String]) {
        self.template = template
        self.prefix = prefix
        self.locationIDs = locationIDs
        self.mealIDs = mealIDs
    }

    func encode(number: Int, random: inout SplitMix64) throws(RPCError) -> [UInt8] {
        try template.encode(number: number, prefix: prefix, random: &random, locationIDs: locationIDs, mealIDs: mealIDs)
    }
}

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
