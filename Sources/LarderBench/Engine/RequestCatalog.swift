import LarderAPI
import LarderWire

/// Creates the data a run needs and encodes the request payloads to pick from.
enum RequestCatalog {
    /// Method path and payloads per workload in `mix`; `seeded` says what was created.
    struct Prepared {
        var groups: [(workload: Workload, method: String, payloads: [[UInt8]])]
        var seeded: [String]
    }

    private static let mealNames = ["porridge", "salad", "pasta", "apple", "soup", "curry"]

    /// Seeds data over one connection to `options.server` (telling stderr) and encodes the payloads.
    /// - Throws: the error of the first call that failed while creating data.
    static func prepare(_ options: BenchOptions, notify: (String) -> Void) throws(RPCError) -> Prepared {
        var random = SplitMix64(seed: UInt64(truncatingIfNeeded: MonotonicClock.now()))
        var prepared = Prepared(groups: [], seeded: [])
        let metadata = options.token.map { ["authorization": "Bearer \($0)"] } ?? [:]
        var seedClient: SeedClient?
        func client() throws(RPCError) -> SeedClient {
            if let seedClient { return seedClient }
            let created = try SeedClient(address: options.server, metadata: metadata, timeoutSeconds: 120)
            seedClient = created
            return created
        }
        for workload in options.activeWorkloads {
            switch workload {
            case .ping:
                prepared.groups.append((.ping, HealthMethods.check.path, [ProtoCodec.encode(HealthCheckRequest())]))
            case .get:
                let prefix = "bench-\(getProcessID())-\(String(MonotonicClock.now(), radix: 36))"
                notify("creating \(options.seedLocations) locations for get (names \(prefix)-N)…")
                let requests = (0..<options.seedLocations).map { index in
                    CreateLocationRequest(location: Location(
                        name: "\(prefix)-\(index)", colorHex: randomColor(&random)))
                }
                let started = MonotonicClock.now()
                let locations = try client().callAll(LocationMethods.createLocation, requests)
                guard locations.allSatisfy({ !$0.id.isEmpty }) else {
                    throw .internalError("CreateLocation returned a location without an id; cannot run get")
                }
                notify("created \(locations.count) locations in \(elapsed(since: started))")
                prepared.seeded.append("\(locations.count) locations")
                prepared.groups.append((.get, LocationMethods.getLocation.path,
                                        locations.map { ProtoCodec.encode(GetLocationRequest(id: $0.id)) }))
            case .create:
                let payloads = (0..<64).map { index in
                    ProtoCodec.encode(CreateMealRecordRequest(mealRecord: randomMeal(index, &random, eatenAt: nil)))
                }
                prepared.groups.append((.create, MealRecordMethods.createMealRecord.path, payloads))
            case .list:
                notify("creating \(options.seedMeals) meal records for list…")
                let nowMilliseconds = Int64(wallClockSeconds() * 1000)
                let requests = (0..<options.seedMeals).map { index in
                    let eaten = nowMilliseconds - Int64(random.below(30 * 24 * 3600 * 1000))
                    return CreateMealRecordRequest(mealRecord: randomMeal(
                        index, &random, eatenAt: Timestamp(unixMilliseconds: eaten)))
                }
                let started = MonotonicClock.now()
                let meals = try client().callAll(MealRecordMethods.createMealRecord, requests)
                notify("created \(meals.count) meal records in \(elapsed(since: started))")
                prepared.seeded.append("\(meals.count) meal records")
                prepared.groups.append((.list, MealRecordMethods.listMealRecords.path,
                                        [ProtoCodec.encode(ListMealRecordsRequest(pageSize: 50))]))
            case .mix:
                break
            }
        }
        return prepared
    }

    private static func randomMeal(_ index: Int, _ random: inout SplitMix64, eatenAt: Timestamp?) -> MealRecord {
        MealRecord(name: mealNames[index % mealNames.count], calories: Int32(50 + random.below(1200)),
                   category: MealCategory(rawValue: Int32(1 + random.below(4))) ?? .snack, eatenAt: eatenAt)
    }

    private static func randomColor(_ random: inout SplitMix64) -> String {
        let value = String(random.below(0x100_0000), radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: 6 - value.count) + value
    }

    private static func elapsed(since start: UInt64) -> String {
        Format.seconds(Double(MonotonicClock.now() - start) / 1e9)
    }
}
