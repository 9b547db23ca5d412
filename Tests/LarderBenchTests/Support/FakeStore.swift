import LarderAPI
import LarderWire
import LarderSystem

/// An in-memory Larder for bench tests: locations and meal records that can be
/// created, read, listed and deleted, so a test can see what a run left behind.
final class FakeStore: Sendable {
    private struct State {
        var locations: [String: Location] = [:]
        var meals: [String: MealRecord] = [:]
        var nextID = 1
        var metadataSeen: [String: String] = [:]
    }

    private let state = LockedValue(State())
    /// Past this many locations a whole ListLocations (page_size 0) is refused RESOURCE_EXHAUSTED,
    /// as the real server refuses a reply over its frame limit (about 40,000 locations), and a
    /// page holds at most this many; nil: never.
    let maxListedLocations: Int?

    init(maxListedLocations: Int? = nil) {
        self.maxListedLocations = maxListedLocations
    }

    var locations: [Location] { state.withLock { Array($0.locations.values) } }
    var meals: [MealRecord] { state.withLock { Array($0.meals.values) } }
    /// The metadata of the last call.
    var lastMetadata: [String: String] { state.withLock { $0.metadataSeen } }

    func addLocation(named name: String) {
        state.withLock { state in
            let id = Self.id(state.nextID)
            state.nextID += 1
            state.locations[id] = Location(id: id, name: name)
        }
    }

    /// Answers one request envelope.
    func reply(_ request: RequestEnvelope) -> ResponseEnvelope {
        do throws(RPCError) {
            return ResponseEnvelope(callID: request.callID, payload: try answer(request))
        } catch {
            return ResponseEnvelope(callID: request.callID, error: error)
        }
    }

    private func answer(_ request: RequestEnvelope) throws(RPCError) -> [UInt8] {
        state.withLock { $0.metadataSeen = request.metadata }
        switch request.method {
        case LocationMethods.createLocation.path:
            var location = try ProtoCodec.decode(CreateLocationRequest.self, from: request.payload).location
            return try state.withLock { state throws(RPCError) in
                if state.locations.values.contains(where: { $0.name == location.name }) {
                    throw RPCError(.alreadyExists, "location name \"\(location.name)\" already exists")
                }
                location.id = Self.id(state.nextID)
                state.nextID += 1
                state.locations[location.id] = location
                return ProtoCodec.encode(location)
            }
        case LocationMethods.getLocation.path:
            let id = try ProtoCodec.decode(GetLocationRequest.self, from: request.payload).id
            guard let location = state.withLock({ $0.locations[id] }) else { throw .notFound("location \"\(id)\" not found") }
            return ProtoCodec.encode(location)
        case LocationMethods.listLocations.path:
            // Sorted by name; the page token is the last name of the page before.
            let request = try ProtoCodec.decode(ListLocationsRequest.self, from: request.payload)
            let all = locations.sorted { $0.name < $1.name }.filter { request.pageToken.isEmpty || $0.name > request.pageToken }
            let size = min(Int(request.pageSize), maxListedLocations ?? .max)
            if request.pageSize == 0 {
                if let maxListedLocations, all.count > maxListedLocations {
                    throw RPCError(.resourceExhausted, "the reply is more than a reply frame may hold")
                }
                return ProtoCodec.encode(ListLocationsResponse(locations: all))
            }
            let page = Array(all.prefix(size))
            return ProtoCodec.encode(ListLocationsResponse(
                locations: page, nextPageToken: all.count > size ? page.last?.name ?? "" : ""))
        case LocationMethods.deleteLocation.path:
            let id = try ProtoCodec.decode(DeleteLocationRequest.self, from: request.payload).id
            guard state.withLock({ $0.locations.removeValue(forKey: id) }) != nil else { throw .notFound("no \(id)") }
            return ProtoCodec.encode(Empty())
        case MealRecordMethods.createMealRecord.path:
            var meal = try ProtoCodec.decode(CreateMealRecordRequest.self, from: request.payload).mealRecord
            state.withLock { state in
                meal.id = Self.id(state.nextID)
                state.nextID += 1
                state.meals[meal.id] = meal
            }
            return ProtoCodec.encode(meal)
        case MealRecordMethods.getMealRecord.path:
            let id = try ProtoCodec.decode(GetMealRecordRequest.self, from: request.payload).id
            guard let meal = state.withLock({ $0.meals[id] }) else { throw .notFound("meal record \"\(id)\" not found") }
            return ProtoCodec.encode(meal)
        case MealRecordMethods.listMealRecords.path:
            let page = try ProtoCodec.decode(ListMealRecordsRequest.self, from: request.payload)
            let all = meals.sorted { $0.id < $1.id }
            let start = Int(page.pageToken) ?? 0
            let size = page.pageSize > 0 ? Int(page.pageSize) : 50
            let slice = Array(all.dropFirst(start).prefix(size))
            let next = start + slice.count < all.count ? String(start + slice.count) : ""
            return ProtoCodec.encode(ListMealRecordsResponse(mealRecords: slice, nextPageToken: next))
        case MealRecordMethods.deleteMealRecord.path:
            let id = try ProtoCodec.decode(DeleteMealRecordRequest.self, from: request.payload).id
            guard state.withLock({ $0.meals.removeValue(forKey: id) }) != nil else { throw .notFound("no \(id)") }
            return ProtoCodec.encode(Empty())
        default:
            return []
        }
    }

    private static func id(_ number: Int) -> String {
        let hex = String(number, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }
}
