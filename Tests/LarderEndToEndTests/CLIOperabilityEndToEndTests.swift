import Foundation
import LarderAPI
import LarderClient
import LarderJSON
import LarderWire
import Testing
import LarderTestSupport

@Suite("larder call, methods, describe and stats against a real server", .offThePool)
struct CLIOperabilityEndToEndTests {
    @Test func callConvertsJSONBothWaysForAnyMethod() async throws {
        try await withServer { server, client in
            let created = try await runLarder(["call", "/larder.v1.LocationService/CreateLocation",
                                         ##"{"location": {"name": "玄關", "color_hex": "#aabbcc"}}"##], server: server)
            #expect(created.status == 0, "\(created.stderr)")
            let json = try JSONParser.parse(created.stdout)
            let id = try #require(json["id"]?.stringValue)
            #expect(json["name"] == .string("玄關") && json["colorHex"] == .string("#AABBCC"))

            // The same entity through the typed client, printed by the generic converter, is the same JSON.
            let typed = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: id))
            #expect(try ProtoJSON.json(fromBinary: ProtoCodec.encode(typed), type: Location.descriptor) == json)

            // The request from stdin, with "-" or with no argument at all.
            for arguments in [["call", "/larder.v1.LocationService/GetLocation", "-"],
                              ["call", "larder.v1.LocationService/GetLocation"]] {
                let fetched = try await runLarder(arguments, server: server, stdin: "{\"id\": \"\(id)\"}\n")
                #expect(fetched.status == 0, "\(fetched.stderr)")
                #expect(try JSONParser.parse(fetched.stdout) == json)
            }

            // 64-bit integers come back as strings, enums by name; --emit-defaults prints zeros.
            let meal = try await runLarder(["call", "/larder.v1.MealRecordService/CreateMealRecord", """
                {"mealRecord": {"name": "拉麵", "calories": "700", "category": 3, "eatenAt": "2026-11-30T20:00:00+08:00"}}
                """], server: server)
            #expect(meal.status == 0, "\(meal.stderr)")
            let mealJSON = try JSONParser.parse(meal.stdout)
            #expect(mealJSON["calories"] == .number("700") && mealJSON["category"] == .string("MEAL_CATEGORY_DINNER"))
            #expect(mealJSON["eatenAt"] == .string("2026-11-30T12:00:00Z"))
            let summary = try await runLarder(["call", "/larder.v1.MealRecordService/SummarizeMealRecords", """
                {"startTime": "2026-11-30T00:00:00Z", "endTime": "2026-12-01T00:00:00Z"}
                """], server: server)
            #expect(try JSONParser.parse(summary.stdout)["totalCalories"] == .string("700"), "\(summary.stderr)")
            let empty = try await runLarder(["call", "/larder.v1.LocationService/DeleteLocation", "{\"id\": \"\(id)\"}"],
                                      server: server)
            #expect(empty.status == 0 && empty.stdout == "{}\n")
            let defaults = try await runLarder(["call", "/larder.v1.MealRecordService/ListMealRecords", "{\"pageSize\": 1}",
                                          "--emit-defaults"], server: server)
            #expect(try JSONParser.parse(defaults.stdout)["nextPageToken"] == .string(""))
        }
    }

    @Test func callReportsMistakesBeforeSendingAndServerErrorsLikeOtherCommands() async throws {
        try await withServer { server, client in
            let unknown = try await runLarder(["call", "/larder.v1.LocationService/Teleport", "{}"], server: server)
            #expect(unknown.status == 2)
            #expect(unknown.stderr.contains("unknown method '/larder.v1.LocationService/Teleport'; larder.v1.LocationService has CreateLocation, GetLocation"))
            let badService = try await runLarder(["call", "/larder.v9.Nope/Get", "{}"], server: server)
            #expect(badService.status == 2 && badService.stderr.contains("larder methods"))

            let wrongType = try await runLarder(["call", "/larder.v1.LocationService/CreateLocation",
                                           #"{"location": {"colorHex": 5}}"#], server: server)
            #expect(wrongType.status == 2)
            #expect(wrongType.stderr.contains("location.colorHex: expected a string, got number"))
            let unknownField = try await runLarder(["call", "/larder.v1.LocationService/GetLocation", #"{"uuid": "x"}"#],
                                             server: server)
            #expect(unknownField.status == 2 && unknownField.stderr.contains("uuid: unknown field"))
            let badJSON = try await runLarder(["call", "/larder.v1.LocationService/GetLocation", "{"], server: server)
            #expect(badJSON.status == 2 && badJSON.stderr.contains("invalid JSON at line 1, column 2"))

            let notFound = try await runLarder(["call", "/larder.v1.LocationService/GetLocation",
                                          #"{"id": "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10"}"#], server: server)
            #expect(notFound.status == 15)
            #expect(notFound.stderr == "NOT_FOUND: location \"6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10\" not found\n")
            #expect(notFound.stdout.isEmpty)

            // Nothing was sent for the mistakes: the server saw only the NOT_FOUND call.
            let metrics = try await client.call(AdminMethods.getMetrics, GetMetricsRequest())
            #expect(metrics.methods.filter { $0.method.hasPrefix("/larder.v1.") }.map(\.method)
                    == [LocationMethods.getLocation.path])
        }
    }

    @Test func methodsAndDescribePrintReflection() async throws {
        try await withServer { server, _ in
            let methods = try await runLarder(["methods"], server: server)
            #expect(methods.status == 0)
            for method in APIServices.all.flatMap(\.methods) {
                #expect(methods.stdout.contains(method.path), "\(method.path)")
            }
            let json = try await runLarder(["methods", "--json", "--service", "larder.v1.LocationService"], server: server)
            let services = try #require(try JSONParser.parse(json.stdout)["services"]?.arrayValue)
            #expect(services.count == 1 && services.first?["name"] == .string("larder.v1.LocationService"))
            // A script can tell the streaming methods, which larder call cannot reach (audit 27 M4).
            let health = try await runLarder(["methods", "--json", "--service", "grpc.health.v1.Health"], server: server)
            let healthMethods = try #require(try JSONParser.parse(health.stdout)["services"]?.arrayValue?.first?["methods"]?.arrayValue)
            let watch = try #require(healthMethods.first { $0["name"] == .string("Watch") })
            let check = try #require(healthMethods.first { $0["name"] == .string("Check") })
            #expect(watch["serverStreaming"] == .bool(true) && watch["clientStreaming"] != .bool(true), "\(watch)")
            #expect(check["serverStreaming"] != .bool(true) && check["clientStreaming"] != .bool(true), "\(check)")

            let location = try await runLarder(["describe", "larder.v1.Location"], server: server)
            #expect(location.stdout == """
                larder.v1.Location is a message:
                message Location {
                  string id = 1;
                  string name = 2;
                  string color_hex = 3;  // JSON: colorHex
                  .google.protobuf.Timestamp create_time = 4;  // JSON: createTime
                  .google.protobuf.Timestamp update_time = 5;  // JSON: updateTime
                }

                """)
            let service = try await runLarder(["describe", "larder.v1.LocationService"], server: server)
            #expect(service.stdout.contains("rpc GetLocation ( .larder.v1.GetLocationRequest ) returns ( .larder.v1.Location );"))
            let enumType = try await runLarder(["describe", "larder.v1.MealCategory"], server: server)
            #expect(enumType.stdout.contains("enum MealCategory {\n  MEAL_CATEGORY_UNSPECIFIED = 0;"))
            let map = try await runLarder(["describe", "larder.admin.v1.MethodMetrics"], server: server)
            #expect(map.stdout.contains("map<string, uint64> calls_by_code = 2;"))
            let missing = try await runLarder(["describe", "larder.v1.Nope"], server: server)
            #expect(missing.status == 15 && missing.stderr.contains("NOT_FOUND"))
        }
    }

    @Test func statsPrintsCallsPerMethod() async throws {
        try await withServer { server, client in
            for _ in 0..<3 { _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest()) }
            let table = try await runLarder(["stats"], server: server)
            #expect(table.status == 0, "\(table.stderr)")
            let row = try #require(table.stdout.split(separator: "\n").first { $0.hasPrefix(LocationMethods.listLocations.path) })
            let cells = row.split(separator: " ", omittingEmptySubsequences: true)
            #expect(cells[1] == "3" && cells[2] == "0" && row.hasSuffix("OK 3"))
            let json = try JSONParser.parse(try await runLarder(["stats", "--json"], server: server).stdout)
            let methods = try #require(json["methods"]?.arrayValue)
            let list = try #require(methods.first { $0["method"] == .string(LocationMethods.listLocations.path) })
            #expect(list["callsByCode"] == .object([.init("OK", .string("3"))]))
        }
    }
}
