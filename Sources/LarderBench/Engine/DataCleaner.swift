import LarderAPI
public import LarderClient
import LarderWire

/// What deleting a run's data did.
public struct CleanupReport: Sendable, Equatable {
    /// The names the data was created under.
    public var prefix: String
    /// What was (or may have been) created, in words.
    public var created: String
    /// `--keep-data`: nothing was deleted.
    public var kept = false
    public var deletedLocations = 0
    public var deletedMeals = 0
    /// Why deleting stopped, escaped (it may quote the server); some data may be left then.
    public var failure: String?
    /// The run's `--tls` flags, for `cleanUpCommand` (a `--tls-only` server refuses cleartext).
    public var tls: ClientTLS?

    /// The command that deletes what is left.
    public func cleanUpCommand(server: BenchAddress) -> String {
        "larder bench --server \(server)" + (tls.map { " " + $0.flags } ?? "") + " --clean-up \(prefix)"
    }
}

/// Deletes what a run created: the locations and meal records named under its
/// prefix (those it knows by id, and those it finds by listing).
enum DataCleaner {
    /// How far before the run's start a create call's meal (eaten "now" by the server's clock) is looked for.
    static let clockSlackMilliseconds: Int64 = 10 * 60 * 1000

    /// Deletes `data` on `server` (over TLS with `tls`), telling `notify` what it does.
    static func clean(_ data: CreatedData, server: BenchAddress, tls: ClientTLS?, metadata: [String: String],
                      connectTimeoutSeconds: Double, notify: (String) -> Void) -> CleanupReport
    {
        var report = CleanupReport(prefix: data.prefix, created: data.summary)
        report.tls = tls
        let state = data.snapshot
        let mealsSince: Int64?? = state.callsMade ? .some(nil)
            : state.createCallsMade ? .some(data.startedAtMilliseconds - clockSlackMilliseconds) : nil
        do throws(RPCError) {
            notify("deleting \(data.summary)")
            let counts = try sweep(prefix: data.prefix, server: server, tls: tls, metadata: metadata,
                                   connectTimeoutSeconds: connectTimeoutSeconds, locationIDs: state.locationIDs,
                                   mealIDs: state.mealIDs, mealsSince: mealsSince)
            report.deletedLocations = counts.locations
            report.deletedMeals = counts.meals
        } catch {
            report.failure = SafeText.escaped(error.description)
        }
        return report
    }

    /// Deletes the locations named `prefix…` (listed, plus `locationIDs`) and the meal records in
    /// `mealIDs`, plus, when `mealsSince` is set, those named `prefix…` eaten since then (nil: any time).
    /// - Returns: how many of each were deleted.
    static func sweep(prefix: String, server: BenchAddress, tls: ClientTLS? = nil, metadata: [String: String],
                      connectTimeoutSeconds: Double, locationIDs: [String] = [], mealIDs: [String] = [],
                      mealsSince: Int64??)
        throws(RPCError) -> (locations: Int, meals: Int)
    {
        let client = try SeedClient(address: server, tls: try BenchTLSContext.forData(tls, server: server),
                                    metadata: metadata, connectTimeoutSeconds: connectTimeoutSeconds,
                                    timeoutSeconds: 600)
        var locations = Set(locationIDs)
        var listing = ListLocationsRequest(pageSize: 1000)
        repeat {
            let page = try client.call(LocationMethods.listLocations, listing)
            for location in page.locations where location.name.hasPrefix(prefix) { locations.insert(location.id) }
            listing.pageToken = page.nextPageToken
        } while !listing.pageToken.isEmpty
        var meals = Set(mealIDs)
        if let since = mealsSince {
            var request = ListMealRecordsRequest(pageSize: 1000, startTime: since.map { Timestamp(unixMilliseconds: $0) })
            repeat {
                let page = try client.call(MealRecordMethods.listMealRecords, request)
                for meal in page.mealRecords where meal.name.hasPrefix(prefix) { meals.insert(meal.id) }
                request.pageToken = page.nextPageToken
            } while !request.pageToken.isEmpty
        }
        let deletedLocations = try client.callEach(LocationMethods.deleteLocation,
                                                   locations.sorted().map { DeleteLocationRequest(id: $0) })
        let deletedMeals = try client.callEach(MealRecordMethods.deleteMealRecord,
                                               meals.sorted().map { DeleteMealRecordRequest(id: $0) })
        return (deletedLocations, deletedMeals)
    }
}
