import LarderAPI
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

    private static let mealNames = ["porridge", "salad", "pasta", "apple", "soup", "curry"]

    /// Seeds data over one connection to `options.server` (telling stderr) and encodes the payloads;
    /// everything created is named under `data.prefix` and recorded in `data` as it arrives.
    /// - Throws: the error of the first call that failed while creating data; CANCELLED when cancelled.
    static func prepare(_ options: BenchOptions, data: CreatedData, cancellation: BenchCancellation? = nil,
                        notify: (String) -> Void) throws(RPCError) -> Prepared
    {
        var random = SplitMix64(seed: UInt64(truncatingIfNeeded: MonotonicClock.nanoseconds()))
        var prepared = Prepared(groups: [], seeded: [])
        let metadata = BenchRunner.seedMetadata(options)
        var seedClient: SeedClient?
        func client() throws(RPCError) -> SeedClient {
            if let seedClient { return seedClient }
            let created = try SeedClient(address: options.server, tls: try BenchTLSContext.forData(options.tls, server: options.server),
                                         metadata: metadata, connectTimeoutSeconds: options.connectTimeoutSeconds,
                                         timeoutSeconds: 120)
            seedClient = created
            return created
        }
        func seedLocations() throws(RPCError) -> [String] {
            notify("creating \(options.seedLocations) locations (named \(data.prefix)-N)…")
            let requests = (0..<options.seedLocations).map { index in
                CreateLocationRequest(location: Location(name: "\(data.prefix)-\(index)", colorHex: randomColor(&random)))
            }
            let started = MonotonicClock.nanoseconds()
            let locations = try client().callAll(LocationMethods.createLocation, requests, cancellation: cancellation) {
                data.addLocations($0.map(\.id).filter { !$0.isEmpty })
            }
            guard locations.allSatisfy({ !$0.id.isEmpty }) else {
                throw .internalError("CreateLocation returned a location without an id; cannot run get")
            }
            notify("created \(locations.count) locations in \(elapsed(since: started))")
            prepared.seeded.append("\(locations.count) locations")
            return locations.map(\.id)
        }
        func seedMeals() throws(RPCError) -> [String] {
            notify("creating \(options.seedMeals) meal records (named \(data.prefix)-…)…")
            let nowMilliseconds = Int64(wallClockSeconds() * 1000)
            let requests = (0..<options.seedMeals).map { index in
                let eaten = nowMilliseconds - Int64(random.below(30 * 24 * 3600 * 1000))
                return CreateMealRecordRequest(mealRecord: randomMeal(
                    index, prefix: data.prefix, &random, eatenAt: Timestamp(unixMilliseconds: eaten)))
            }
            let started = MonotonicClock.nanoseconds()
            let meals = try client().callAll(MealRecordMethods.createMealRecord, requests, cancellation: cancellation) {
                data.addMeals($0.map(\.id).filter { !$0.isEmpty })
            }
            notify("created \(meals.count) meal records in \(elapsed(since: started))")
            prepared.seeded.append("\(meals.count) meal records")
            return meals.map(\.id)
        }

        for workload in options.activeWorkloads {
            switch workload {
            case .ping:
                prepared.groups.append(Group(workload: .ping, method: HealthMethods.check.path,
                                             payloads: [ProtoCodec.encode(HealthCheckRequest())]))
            case .get:
                let ids = try seedLocations()
                prepared.groups.append(Group(workload: .get, method: LocationMethods.getLocation.path,
                                             payloads: ids.map { ProtoCodec.encode(GetLocationRequest(id: $0)) }))
            case .create:
                let payloads = (0..<64).map { index in
                    ProtoCodec.encode(CreateMealRecordRequest(
                        mealRecord: randomMeal(index, prefix: data.prefix, &random, eatenAt: nil)))
                }
                data.noteCreateCalls()
                prepared.groups.append(Group(workload: .create, method: MealRecordMethods.createMealRecord.path,
                                             payloads: payloads))
            case .list:
                _ = try seedMeals()
                prepared.groups.append(Group(workload: .list, method: MealRecordMethods.listMealRecords.path,
                                             payloads: [ProtoCodec.encode(ListMealRecordsRequest(pageSize: 50))]))
            case .call:
                guard let call = options.call else { break }
                let locationIDs = call.template.usesLocationIDs ? try seedLocations() : []
                let mealIDs = call.template.usesMealIDs ? try seedMeals() : []
                let generator = PayloadGenerator(template: call.template, prefix: data.prefix,
                                                 locationIDs: locationIDs, mealIDs: mealIDs)
                if !call.isReadOnly { data.noteCalls() }
                if call.template.isConstant {
                    var unused = random
                    prepared.groups.append(Group(workload: .call, method: call.path,
                                                 payloads: [try generator.encode(number: 0, random: &unused)]))
                } else {
                    prepared.groups.append(Group(workload: .call, method: call.path, payloads: [[]],
                                                 generator: generator))
                }
            case .mix:
                break
            }
        }
        return prepared
    }

    private static func randomMeal(_ index: Int, prefix: String, _ random: inout SplitMix64, eatenAt: Timestamp?)
        -> MealRecord
    {
        MealRecord(name: "\(prefix)-\(mealNames[index % mealNames.count])", calories: Int32(50 + random.below(1200)),
                   category: MealCategory(rawValue: Int32(1 + random.below(4))) ?? .snack, eatenAt: eatenAt)
    }

    private static func randomColor(_ random: inout SplitMix64) -> String {
        let value = String(random.below(0x100_0000), radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: 6 - value.count) + value
    }

    private static func elapsed(since start: UInt64) -> String {
        Format.seconds(Double(MonotonicClock.nanoseconds() - start) / 1e9)
    }
}
