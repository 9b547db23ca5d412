import LarderTestSupport
import Dispatch
import Foundation
import LarderAPI
import LarderClient
import LarderWire
import Testing

/// Several larder-server processes on one PostgreSQL database, as replicas
/// behind a load balancer would run: each is stateless apart from its
/// connections; PostgreSQL keeps the data and the rules consistent.
@Suite("Replicas on one PostgreSQL database",
       .enabled(if: PostgresTestDatabase.adminURL != nil, "LARDER_TEST_POSTGRES_URL is not set"), .offThePool)
struct MultiReplicaEndToEndTests {
    /// Starts one server per entry of `arguments`, all at the same time, on the database at `url`.
    static func startReplicas(on url: String, arguments: [[String]]) async throws -> [ServerProcess] {
        try await withThrowingTaskGroup(of: (Int, ServerProcess).self) { group in
            for index in arguments.indices {
                group.addTask { (index, try await ServerProcess(arguments: arguments[index], databasePath: url)) }
            }
            var started: [Int: ServerProcess] = [:]
            for try await (index, server) in group { started[index] = server }
            return try arguments.indices.map { index in
                guard let server = started[index] else { throw ServerProcess.Failure.didNotStart("replica \(index)") }
                return server
            }
        }
    }

    static func client(_ server: ServerProcess) throws -> LarderClient {
        try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port),
                         options: ClientOptions(defaultTimeout: .seconds(120)))
    }

    @Test func threeReplicasSeedOnceAndEachServesEveryWrite() async throws {
        let database = try PostgresTestDatabase()
        let servers = try await Self.startReplicas(on: database.url, arguments: [[], [], []])
        let clients = try servers.map(Self.client)
        defer {
            for client in clients { client.close() }
            for server in servers { server.stop() }
        }

        // Started together, yet the defaults exist once.
        for client in clients {
            let locations = try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations
            #expect(locations.map(\.name).sorted() == ["客廳", "廚房", "臥室", "浴室"].sorted())
            let groups = try await client.call(CategoryGroupMethods.listCategoryGroups, ListCategoryGroupsRequest())
            #expect(groups.categoryGroups.count == 9)
        }

        // Concurrent writes through all three.
        let created = try await withThrowingTaskGroup(of: MealRecord.self) { group in
            for index in 0..<90 {
                let client = clients[index % clients.count]
                group.addTask {
                    try await client.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(mealRecord: MealRecord(
                        name: "meal \(index) via \(index % 3)", calories: Int32(index), category: .lunch,
                        eatenAt: Timestamp(seconds: 1_800_000_000 + Int64(index)))))
                }
                group.addTask {
                    let location = try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                        location: Location(name: "room \(index)", colorHex: "#123456")))
                    return MealRecord(id: location.id, name: "location")
                }
            }
            return try await group.reduce(into: [MealRecord]()) { $0.append($1) }
        }
        let meals = created.filter { $0.name != "location" }
        let locationIDs = Set(created.filter { $0.name == "location" }.map(\.id))
        #expect(meals.count == 90 && locationIDs.count == 90)

        // Every write is read back through each replica.
        for client in clients {
            for meal in meals {
                #expect(try await client.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: meal.id)) == meal)
            }
            let locations = try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations
            #expect(locationIDs.isSubset(of: Set(locations.map(\.id))) && locations.count == 94)
            let page = try await client.call(MealRecordMethods.listMealRecords, ListMealRecordsRequest(pageSize: 1000))
            #expect(page.mealRecords == meals.sorted { $0.eatenAt?.unixMilliseconds ?? 0 > $1.eatenAt?.unixMilliseconds ?? 0 })
        }
    }

    @Test func twoReplicasRacingForOneNameGetExactlyOneOK() async throws {
        let database = try PostgresTestDatabase()
        // One replica acknowledges commits before PostgreSQL flushes them (synchronous_commit=off).
        let servers = try await Self.startReplicas(on: database.url, arguments: [[], ["--durability", "normal"]])
        let clients = try servers.map(Self.client)
        defer {
            for client in clients { client.close() }
            for server in servers { server.stop() }
        }
        for round in 0..<15 {
            let name = "race \(round)"
            let results = await withTaskGroup(of: Result<Location, RPCError>.self) { group in
                for client in clients {
                    group.addTask {
                        do {
                            return .success(try await client.call(LocationMethods.createLocation, CreateLocationRequest(
                                location: Location(name: name, colorHex: "#123456"))))
                        } catch let error as RPCError {
                            return .failure(error)
                        } catch {
                            return .failure(RPCError(.unknown, "\(error)"))
                        }
                    }
                }
                return await group.reduce(into: [Result<Location, RPCError>]()) { $0.append($1) }
            }
            let winners = results.compactMap { try? $0.get() }
            let losers = results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
            #expect(winners.count == 1, "round \(round): \(results)")
            #expect(losers == [RPCError(.alreadyExists, "location name \"\(name)\" already exists")])
            for client in clients {
                let stored = try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations
                #expect(stored.filter { $0.name == name } == winners)
            }
        }
    }
}
