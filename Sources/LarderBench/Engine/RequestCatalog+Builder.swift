import LarderAPI
import LarderSystem
import LarderWire

extension RequestCatalog {
    /// What one `prepare` has built so far, and what building needs: the random numbers every seeded
    /// record and payload draws from (in workload order) and the one connection that seeds data,
    /// opened when first needed.
    struct Builder {
        let options: BenchOptions
        let data: CreatedData
        let cancellation: BenchCancellation?
        private(set) var prepared = Prepared(groups: [], seeded: [])
        private var random: SplitMix64
        private let metadata: [String: String]
        private var seedClient: SeedClient?

        init(options: BenchOptions, data: CreatedData, cancellation: BenchCancellation?) {
            random = SplitMix64(seed: UInt64(truncatingIfNeeded: MonotonicClock.nanoseconds()))
            self.options = options
            self.data = data
            self.cancellation = cancellation
            metadata = BenchRunner.seedMetadata(options)
        }

        /// Adds the group of `workload`, creating the data it reads first; `mix`, and `call` without
        /// `--call`, add none.
        /// - Throws: the error of the first call that failed while creating data; CANCELLED when cancelled.
        mutating func addGroup(for workload: Workload, notify: (String) -> Void) throws(RPCError) {
            switch workload {
            case .ping:
                prepared.groups.append(Group(workload: .ping, method: HealthMethods.check.path,
                                             payloads: [ProtoCodec.encode(HealthCheckRequest())]))
            case .get:
                let ids = try seedLocations(notify: notify)
                prepared.groups.append(Group(workload: .get, method: LocationMethods.getLocation.path,
                                             payloads: ids.map { ProtoCodec.encode(GetLocationRequest(id: $0)) }))
            case .create:
                addCreateGroup()
            case .list:
                _ = try seedMeals(notify: notify)
                prepared.groups.append(Group(workload: .list, method: MealRecordMethods.listMealRecords.path,
                                             payloads: [ProtoCodec.encode(ListMealRecordsRequest(pageSize: 50))]))
            case .call:
                guard let call = options.call else { break }
                try addCallGroup(call, notify: notify)
            case .mix:
                break
            }
        }

        /// The `create` group: 64 random meal records without `eaten_at` (the server stamps them), noted in
        /// `data` as create calls to come.
        private mutating func addCreateGroup() {
            let payloads = (0..<64).map { index in
                ProtoCodec.encode(CreateMealRecordRequest(
                    mealRecord: Self.randomMeal(index, prefix: data.prefix, &random, eatenAt: nil)))
            }
            data.noteCreateCalls()
            prepared.groups.append(Group(workload: .create, method: MealRecordMethods.createMealRecord.path,
                                         payloads: payloads))
        }

        /// The `--call` group, after creating the locations and meal records its template names: a constant
        /// template is encoded once, any other by a generator per call.
        private mutating func addCallGroup(_ call: CallSpec, notify: (String) -> Void) throws(RPCError) {
            let locationIDs = call.template.usesLocationIDs ? try seedLocations(notify: notify) : []
            let mealIDs = call.template.usesMealIDs ? try seedMeals(notify: notify) : []
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
        }

        /// Creates `--seed-locations` locations named `PREFIX-N` in random colours, recording their ids
        /// in `data` batch by batch (telling `notify`).
        /// - Returns: their ids, in order.
        /// - Throws: INTERNAL when a location comes back without an id.
        private mutating func seedLocations(notify: (String) -> Void) throws(RPCError) -> [String] {
            notify("creating \(options.seedLocations) locations (named \(data.prefix)-N)…")
            let requests = (0..<options.seedLocations).map { index in
                CreateLocationRequest(location: Location(name: "\(data.prefix)-\(index)",
                                                         colorHex: Self.randomColor(&random)))
            }
            let started = MonotonicClock.nanoseconds()
            let locations = try client().callAll(LocationMethods.createLocation, requests, cancellation: cancellation) {
                data.addLocations($0.map(\.id).filter { !$0.isEmpty })
            }
            guard locations.allSatisfy({ !$0.id.isEmpty }) else {
                throw .internalError("CreateLocation returned a location without an id; cannot run get")
            }
            notify("created \(locations.count) locations in \(Self.elapsed(since: started))")
            prepared.seeded.append("\(locations.count) locations")
            return locations.map(\.id)
        }

        /// Creates `--seed-meals` random meal records named `PREFIX-…`, eaten within the last 30 days,
        /// recording their ids in `data` batch by batch (telling `notify`).
        /// - Returns: their ids, in order.
        private mutating func seedMeals(notify: (String) -> Void) throws(RPCError) -> [String] {
            notify("creating \(options.seedMeals) meal records (named \(data.prefix)-…)…")
            let nowMilliseconds = Int64(wallClockSeconds() * 1000)
            let requests = (0..<options.seedMeals).map { index in
                let eaten = nowMilliseconds - Int64(random.below(30 * 24 * 3600 * 1000))
                return CreateMealRecordRequest(mealRecord: Self.randomMeal(
                    index, prefix: data.prefix, &random, eatenAt: Timestamp(unixMilliseconds: eaten)))
            }
            let started = MonotonicClock.nanoseconds()
            let meals = try client().callAll(MealRecordMethods.createMealRecord, requests, cancellation: cancellation) {
                data.addMeals($0.map(\.id).filter { !$0.isEmpty })
            }
            notify("created \(meals.count) meal records in \(Self.elapsed(since: started))")
            prepared.seeded.append("\(meals.count) meal records")
            return meals.map(\.id)
        }

        /// The connection that creates data (over TLS with `--tls`), opened on first use; each call on it
        /// must end within 120 seconds.
        private mutating func client() throws(RPCError) -> SeedClient {
            if let seedClient { return seedClient }
            let created = try SeedClient(address: options.server, tls: try BenchTLSContext.forData(options.tls, server: options.server),
                                         metadata: metadata, connectTimeoutSeconds: options.connectTimeoutSeconds,
                                         timeoutSeconds: 120)
            seedClient = created
            return created
        }
    }
}

extension RequestCatalog.Builder {
    private static let mealNames = ["porridge", "salad", "pasta", "apple", "soup", "curry"]

    /// A meal record named `PREFIX-NAME` (the names taken in turn) with random calories and category.
    private static func randomMeal(_ index: Int, prefix: String, _ random: inout SplitMix64, eatenAt: Timestamp?)
        -> MealRecord
    {
        MealRecord(name: "\(prefix)-\(mealNames[index % mealNames.count])", calories: Int32(50 + random.below(1200)),
                   category: MealCategory(rawValue: Int32(1 + random.below(4))), eatenAt: eatenAt)
    }

    /// A random `#RRGGBB` colour.
    private static func randomColor(_ random: inout SplitMix64) -> String {
        let value = String(random.below(0x100_0000), radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: 6 - value.count) + value
    }

    /// The seconds since `start` (monotonic nanoseconds), as the notices write them.
    private static func elapsed(since start: UInt64) -> String {
        Format.seconds(Double(MonotonicClock.nanoseconds() - start) / 1e9)
    }
}
