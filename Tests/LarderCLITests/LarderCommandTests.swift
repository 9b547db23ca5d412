import Foundation
import LarderAPI
@testable import LarderCLI
import LarderClient
import LarderWire
import Testing

/// The whole `larder` command against the fake server: what is sent, what is printed, the exit status.
@Suite("larder command")
struct LarderCommandTests {
    func run(_ arguments: [String], server: FakeServer?, environment: [String: String] = [:],
             serve: (inout AsyncStream<RequestEnvelope>.Iterator) async throws -> Void = { _ in }) async throws -> CLIRun {
        try await CLIRunner.run(arguments, server: server, environment: environment, serve: serve)
    }

    @Test("locations list prints a table aligned by display width")
    func listTable() async throws {
        let server = try FakeServer()
        let result = try await run(["locations", "list"], server: server) { requests in
            let request = try #require(await requests.next())
            #expect(request.method == "/larder.v1.LocationService/ListLocations")
            #expect(request.timeoutMilliseconds == 600_000, "--timeout reaches the wire as the call's deadline")
            let reply = ListLocationsResponse(locations: [
                Location(id: "id-1", name: "客廳", colorHex: "#FF5733"),
                Location(id: "id-22", name: "Garage", colorHex: "#000000"),
            ])
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(result.stdout == """
            ID     NAME    COLOR
            id-1   客廳    #FF5733
            id-22  Garage  #000000

            """)
    }

    @Test("--json prints one JSON document in the proto3 mapping")
    func json() async throws {
        let server = try FakeServer()
        let result = try await run(["meals", "get", "a1b2c3d4-0000-4000-8000-000000000001", "--json"], server: server) { requests in
            let request = try #require(await requests.next())
            #expect(try ProtoCodec.decode(GetMealRecordRequest.self, from: request.payload).id == "a1b2c3d4-0000-4000-8000-000000000001")
            let meal = MealRecord(id: "a1b2c3d4-0000-4000-8000-000000000001", name: "Oatmeal", calories: 350, category: .breakfast,
                                  eatenAt: Timestamp(seconds: 1_795_996_800))
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(meal)))
        }
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["id"] as? String == "a1b2c3d4-0000-4000-8000-000000000001")
        #expect(object["calories"] as? Int == 350)
        #expect(object["category"] as? String == "MEAL_CATEGORY_BREAKFAST")
        #expect(object["eatenAt"] as? String == "2026-11-30T00:00:00Z")
    }

    @Test("meals add sends the fields; --at is read as RFC 3339 and shown in local time")
    func mealsAdd() async throws {
        let server = try FakeServer()
        let result = try await run(["meals", "add", "--name", "Oatmeal", "--calories", "350", "--category",
                                    "breakfast", "--at", "2026-11-30T08:00:00+08:00"], server: server) { requests in
            let request = try #require(await requests.next())
            let create = try ProtoCodec.decode(CreateMealRecordRequest.self, from: request.payload)
            #expect(create.mealRecord == MealRecord(name: "Oatmeal", calories: 350, category: .breakfast,
                                                    eatenAt: Timestamp(seconds: 1_795_996_800)))
            var created = create.mealRecord
            created.id = "new-id"
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(created)))
        }
        #expect(result.status == 0)
        #expect(result.stdout.contains("ID        new-id\n"))
        #expect(result.stdout.contains("Eaten at  2026-11-30T08:00:00+08:00\n"))
    }

    @Test("UNAUTHENTICATED gets a hint on stderr about giving a token, TLS, or a client certificate", arguments: [
        ([String](), "this server requires a bearer token: send metadata authorization: Bearer <token>",
         "hint: pass --token-file FILE, --token, or set LARDER_TOKEN\n"),
        (["--token", "t"], "invalid bearer token",
         "hint: the server refused the token larder sent (--token-file FILE, --token, LARDER_TOKEN, or -H 'authorization: Bearer …')\n"),
        (["-H", "authorization: Bearer t"], "invalid bearer token",
         "hint: the server refused the token larder sent (--token-file FILE, --token, LARDER_TOKEN, or -H 'authorization: Bearer …')\n"),
        ([String](), "the server requires a client certificate: present one signed by the server's client CA",
         "hint: pass --cert FILE --key FILE (or LARDER_CERT, LARDER_KEY): a certificate the server's client CA signed\n"),
        // Not the token's fault: a TLS-only server, a certificate the server refused (audit 27 M2).
        ([String](), "this server takes calls other than health checks over TLS only (--tls-client-auth require): connect with TLS (larder --tls)",
         "hint: add --tls (with --ca FILE for a server whose certificate a private CA signed)\n"),
        ([String](), "TLS error: the server rejected this client's certificate (not issued by a CA it trusts, or expired)",
         "hint: pass --cert FILE --key FILE (or LARDER_CERT, LARDER_KEY): a certificate the server's client CA signed\n"),
    ])
    func unauthenticatedHint(extra: [String], message: String, hint: String) async throws {
        let server = try FakeServer()
        let result = try await run(["locations", "list"] + extra, server: server) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID, statusCode: .unauthenticated, statusMessage: message))
        }
        #expect(result.status == 26)
        #expect(result.stdout == "")
        #expect(result.stderr == "UNAUTHENTICATED: \(message)\n" + hint)
    }

    /// A create that timed out could still be committed; a script retrying on exit 14 made a
    /// duplicate (audit 27 M3). Reads get no such line.
    @Test("a write that timed out says it may still be applied", arguments: [
        (["meals", "add", "--name", "Tea", "--calories", "5", "--category", "snack"], StatusCode.deadlineExceeded,
         "hint: the meals add may still have been applied: look before you try again (or give it an --id: a second add with the same id is ALREADY_EXISTS)\n"),
        (["locations", "delete", "e1b2c3d4-0000-4000-8000-000000000001"], StatusCode.deadlineExceeded,
         "hint: the locations delete may still have been applied: look before you try again\n"),
        (["locations", "list"], StatusCode.deadlineExceeded, ""),
        (["meals", "add", "--name", "Tea", "--calories", "5", "--category", "snack"], StatusCode.unavailable, ""),
    ])
    func unknownOutcomeHint(arguments: [String], code: StatusCode, hint: String) async throws {
        let server = try FakeServer()
        let result = try await run(arguments, server: server) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID, statusCode: code, statusMessage: "it took too long"))
        }
        #expect(result.stdout == "")
        #expect(result.stderr == "\(code.name): it took too long\n" + hint)
    }

    /// A write whose connection ended after it was sent (a drain cut short) may be applied too;
    /// exit 24 alone looked like a connection never made (audit 35 M1).
    @Test("a write the server closed the connection on after it was sent says it may still be applied")
    func unknownOutcomeHintAfterAClosedConnection() async throws {
        let server = try FakeServer()
        let result = try await run(["meals", "add", "--name", "Tea", "--calories", "5", "--category", "snack"],
                                   server: server) { requests in
            _ = try #require(await requests.next())
            server.closeConnection()
        }
        #expect(result.status == 24)
        #expect(result.stderr == "UNAVAILABLE: connection to \(server.address) closed by the server (the request was sent: "
                + "the server may have applied it)\nhint: the meals add may still have been applied: look before you try "
                + "again (or give it an --id: a second add with the same id is ALREADY_EXISTS)\n", "\(result.stderr)")
    }

    /// Only a write's delivery leads to the hint: a `locations delete Kitchen` whose name lookup
    /// (a List) was cut off sent no delete (review 33 L4).
    @Test("a read's RequestDelivery is dropped, a write's kept", arguments: [
        ("/larder.v1.LocationService/ListLocations", false), ("/larder.v1.MealRecordService/GetMealRecord", false),
        ("/larder.v1.LocationService/DeleteLocation", true), ("/larder.v1.MealRecordService/CreateMealRecord", true),
        ("/larder.v1.MealRecordService/UpdateMealRecord", true),
    ])
    func deliveryOfWritesOnly(path: String, kept: Bool) {
        let error = RPCError(.unavailable, "connection to x closed by the server (the request was sent: the server may "
                             + "have applied it)", cause: RequestDelivery.sent)
        let shown = CommandContext.deliveryOfWritesOnly(error, path: path)
        #expect((shown.cause as? RequestDelivery == .sent) == kept)
        #expect(shown.message == error.message && shown.code == .unavailable)
    }

    @Test("deleting a non-empty group without --cascade names the flag the server's message calls cascade")
    func cascadeHint() async throws {
        let server = try FakeServer()
        let message = "category group \"e1b2c3d4-0000-4000-8000-000000000001\" still has 2 item categories; delete them first or set cascade"
        let result = try await run(["groups", "delete", "e1b2c3d4-0000-4000-8000-000000000001"], server: server) { requests in
            let request = try #require(await requests.next())
            #expect(request.method == CategoryGroupMethods.deleteCategoryGroup.path)
            server.reply(ResponseEnvelope(callID: request.callID, statusCode: .failedPrecondition, statusMessage: message))
        }
        #expect(result.status == 19)
        #expect(result.stderr == "FAILED_PRECONDITION: \(message) (--cascade)\n", "\(result.stderr)")
    }

    @Test("update sends only the flags given, as the update mask")
    func updateMask() async throws {
        let server = try FakeServer()
        let result = try await run(["locations", "update", "e1b2c3d4-0000-4000-8000-000000000001", "--color", "#112233"], server: server) { requests in
            let request = try #require(await requests.next())
            let update = try ProtoCodec.decode(UpdateLocationRequest.self, from: request.payload)
            #expect(update.location == Location(id: "e1b2c3d4-0000-4000-8000-000000000001", colorHex: "#112233"))
            #expect(update.updateMask == FieldMask(paths: ["color_hex"]))
            let updated = Location(id: "e1b2c3d4-0000-4000-8000-000000000001", name: "客廳", colorHex: "#112233")
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(updated)))
        }
        #expect(result.status == 0)
        #expect(result.stdout.contains("Color    #112233"))
    }

    @Test("categories get shows its group by name, as categories list does; JSON keeps the id alone")
    func categoryShowsItsGroupName() async throws {
        let groupID = "e1b2c3d4-0000-4000-8000-000000000009"
        let category = ItemCategory(id: "e1b2c3d4-0000-4000-8000-000000000001", name: "零食", iconName: "leaf",
                                    categoryGroupID: groupID)
        for json in [false, true] {
            let server = try FakeServer()
            let arguments = (json ? ["--json"] : []) + ["categories", "get", category.id]
            let result = try await run(arguments, server: server) { requests in
                let get = try #require(await requests.next())
                #expect(get.method == ItemCategoryMethods.getItemCategory.path)
                server.reply(ResponseEnvelope(callID: get.callID, payload: ProtoCodec.encode(category)))
                guard !json else { return }
                let group = try #require(await requests.next())
                #expect(group.method == CategoryGroupMethods.getCategoryGroup.path)
                #expect(try ProtoCodec.decode(GetCategoryGroupRequest.self, from: group.payload).id == groupID)
                server.reply(ResponseEnvelope(callID: group.callID,
                                              payload: ProtoCodec.encode(CategoryGroup(id: groupID, name: "食品"))))
            }
            #expect(result.status == 0, "\(result.stderr)")
            if json {
                #expect(result.stdout.contains("\"categoryGroupId\": \"\(groupID)\""), "\(result.stdout)")
                #expect(!result.stdout.contains("食品"))
            } else {
                #expect(result.stdout.contains("Group    食品 (\(groupID))\n"), "\(result.stdout)")
            }
        }
    }

    @Test("the token is sent as a bearer authorization")
    func token() async throws {
        let server = try FakeServer()
        let result = try await run(["health"], server: server, environment: ["LARDER_TOKEN": "s3cret"]) { requests in
            let request = try #require(await requests.next())
            #expect(request.method == "/grpc.health.v1.Health/Check")
            #expect(request.metadata["authorization"] == "Bearer s3cret")
            let reply = HealthCheckResponse(status: .serving)
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
        #expect(result.status == 0)
        #expect(result.stdout == "SERVING\n")
    }

    @Test("health exits 1 when the server is not serving")
    func notServing() async throws {
        let server = try FakeServer()
        let result = try await run(["health", "--json"], server: server) { requests in
            let request = try #require(await requests.next())
            let reply = HealthCheckResponse(status: .notServing)
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
        #expect(result.status == 1)
        #expect(result.stdout == "{\n  \"status\": \"NOT_SERVING\"\n}\n")
    }

    @Test("a server error prints STATUS: message to stderr and exits 10 + code")
    func serverError() async throws {
        let server = try FakeServer()
        let result = try await run(["locations", "add", "--name", "客廳", "--color", "#FF5733"],
                                   server: server) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID,
                                          error: .alreadyExists("location name \"客廳\" already exists")))
        }
        #expect(result.status == 16)
        #expect(result.stdout == "")
        #expect(result.stderr == "ALREADY_EXISTS: location name \"客廳\" already exists\n")
    }

    @Test("a status message of megabytes is cut to 4 KiB on stderr, with its size")
    func hugeStatusMessage() async throws {
        let server = try FakeServer()
        let message = String(repeating: "x", count: 3 << 20)
        let result = try await run(["locations", "list"], server: server) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID, statusCode: .notFound, statusMessage: message))
        }
        #expect(result.status == 15)
        #expect(result.stderr.utf8.count < 5000, "\(result.stderr.utf8.count) bytes")
        #expect(result.stderr.hasSuffix("… (3145739 bytes in all)\n"), "\(result.stderr.suffix(80))")
    }

    /// larder's own usage errors quote what the user gave; 120 KB of it was written whole (audit 35 L3).
    @Test("a usage error quoting a huge argument is cut to 4 KiB too", arguments: [
        ["meals", "get"], ["meals", "add", "--name", "x", "--calories", "1", "--category"], [],
    ])
    func hugeArgumentInAUsageError(prefix: [String]) async throws {
        let huge = String(repeating: "y", count: 120_000)
        let result = try await CLIRunner.run(prefix + [huge], server: nil)
        #expect(result.status == 2)
        #expect(result.stderr.utf8.count < 5000, "\(result.stderr.utf8.count) bytes")
        #expect(result.stderr.hasPrefix("larder: ") && result.stderr.contains(" bytes in all)\nRun '"),
                "\(result.stderr.suffix(120))")
    }

    /// Status messages a Swift string cannot hold as sent, and what the CLI shows of them.
    static let unusualMessages: [([UInt8], String)] = {
        let withNUL: [UInt8] = Array("bad id".utf8) + [0] + Array("and more".utf8)
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(" id".utf8)
        return [(withNUL, "bad id [the server's message went on after a NUL byte, not shown]"),
                (latin1, "caf\u{FFFD} id")]
    }()

    @Test("a status message with a NUL byte or bad UTF-8 keeps the server's code", arguments: unusualMessages)
    func mendedStatusMessage(message: [UInt8], shown: String) async throws {
        let server = try FakeServer()
        let result = try await run(["locations", "list"], server: server) { requests in
            let request = try #require(await requests.next())
            // call_id, status_code 3 (INVALID_ARGUMENT), status_message: written by hand, as
            // protobuf-c would not write a NUL.
            var envelope: [UInt8] = [0x08]
            var id = request.callID
            while id >= 0x80 { envelope.append(UInt8(id & 0x7F) | 0x80); id >>= 7 }
            envelope += [UInt8(id), 0x10, 0x03, 0x1A, UInt8(message.count)] + message
            var frame: [UInt8] = []
            Frame.append(envelope, to: &frame)
            server.sendRaw(frame)
        }
        #expect(result.status == 13, "INVALID_ARGUMENT, not INTERNAL: \(result.stderr)")
        #expect(result.stderr == "INVALID_ARGUMENT: \(shown)\n", "\(result.stderr)")
    }

    @Test("an unreachable server is UNAVAILABLE with the address, exit 24")
    func unreachable() async throws {
        let closed = try ClosedPort()
        let port = closed.port
        let result = try await run(["groups", "list", "--server", "127.0.0.1:\(port)"], server: nil)
        #expect(result.status == 24)
        #expect(result.stderr.hasPrefix("UNAVAILABLE: cannot connect to 127.0.0.1:\(port): "))
        #expect(result.stdout == "")
    }

    @Test("usage errors exit 2 without contacting a server", arguments: [
        ["meals", "add", "--name", "x", "--calories", "lots", "--category", "lunch"],
        ["meals", "add", "--name", "x", "--calories", "1", "--category", "brunch"],
        ["meals", "list", "--since", "yesterday"],
        ["meals", "list", "--all", "--page-token", "t"],
        ["meals", "summary", "--since", "2026-11-01", "--until", "2026-12-01", "--utc-offset", "+25:00"],
        ["locations", "update", "id"],
        ["locations", "lst"],
    ])
    func usageErrors(arguments: [String]) async throws {
        let result = try await run(arguments + ["--server", "127.0.0.1:1"], server: nil)
        #expect(result.status == 2)
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("larder: "))
        #expect(result.stderr.contains("--help' for usage."))
    }

    @Test("help goes to stdout and exits 0, listing the command's options")
    func help() async throws {
        let result = try await run(["categories", "add", "--help"], server: nil)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix(
            "Usage: larder categories add --group GROUP --name NAME --icon ICON [--id UUID]\n"))
        for option in CategoryCommandsOptions.add { #expect(result.stdout.contains(option)) }
        let top = try await run(["--help"], server: nil)
        #expect(top.stdout.contains("24 UNAVAILABLE"))
        #expect(top.stdout.contains("  meals "))
    }

    @Test("meals list --all that stops at its page cap with more to come fails, after printing what it got")
    func allStopsAtItsCapWithAnError() async throws {
        let server = try FakeServer()
        let result = try await run(["-o", "ids", "meals", "list", "--all"], server: server) { requests in
            for page in 0..<10_000 {
                guard let request = await requests.next() else { return }
                let meal = MealRecord(id: "m\(page)", name: "n", calories: 1, category: .lunch)
                let reply = ListMealRecordsResponse(mealRecords: page < 2 ? [meal] : [], nextPageToken: "t\(page + 1)")
                server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
            }
        }
        #expect(result.status == 18, "RESOURCE_EXHAUSTED, not a success: \(result.stderr)")
        #expect(result.stdout == "m0\nm1\n")
        #expect(result.stderr.contains("meals list --all stopped after 10000 pages with more to come"), "\(result.stderr)")
        #expect(result.stderr.contains("--page-token t10000"), "\(result.stderr)")
    }

    @Test("meals list --all follows page tokens; summary sends the UTC offset")
    func pagesAndSummary() async throws {
        let server = try FakeServer()
        let result = try await run(["meals", "list", "--all", "--category", "lunch", "--json"],
                                   server: server) { requests in
            for (token, next) in [("", "p2"), ("p2", "")] {
                let request = try #require(await requests.next())
                let list = try ProtoCodec.decode(ListMealRecordsRequest.self, from: request.payload)
                #expect(list.pageToken == token)
                #expect(list.category == .lunch)
                let meal = MealRecord(id: "m-\(token)", name: "n", calories: 1, category: .lunch)
                let reply = ListMealRecordsResponse(mealRecords: [meal], nextPageToken: next)
                server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
            }
        }
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let ids = (object["mealRecords"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(ids == ["m-", "m-p2"])
        #expect(object["nextPageToken"] as? String == "")

        let summaryServer = try FakeServer()
        let summary = try await run(["meals", "summary", "--since", "2026-11-30", "--until", "2026-12-01T00:00:00Z",
                                     "--utc-offset", "-05:00"], server: summaryServer) { requests in
            let request = try #require(await requests.next())
            let summarize = try ProtoCodec.decode(SummarizeMealRecordsRequest.self, from: request.payload)
            #expect(summarize.utcOffsetMinutes == -300)
            #expect(summarize.startTime == Timestamp(seconds: 1_795_996_800 + 5 * 3600))  // midnight at -05:00, not Taipei's
            #expect(summarize.endTime == Timestamp(seconds: 1_795_996_800 + 86_400))
            let lunch = CategoryTotal(category: .lunch, totalCalories: 700, mealCount: 1)
            let reply = SummarizeMealRecordsResponse(
                days: [DailySummary(date: "2026-11-30", totalCalories: 700, mealCount: 1, categories: [lunch])],
                totalCalories: 700, mealCount: 1, categories: [lunch])
            summaryServer.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
        #expect(summary.status == 0)
        #expect(summary.stdout == """
            DATE        MEALS  CALORIES  BREAKFAST  LUNCH  DINNER  SNACK
            2026-11-30      1       700          -    700       -      -
            TOTAL           1       700          -    700       -      -
            Days are local dates at UTC-05:00.

            """)
    }
}

enum CategoryCommandsOptions {
    static let add = ["--group GROUP", "--name NAME", "--icon ICON", "--id UUID", "--server HOST:PORT",
                      "--timeout DURATION", "--json", "--token TOKEN", "-o, --output FORMAT", "-H, --header"]
}
