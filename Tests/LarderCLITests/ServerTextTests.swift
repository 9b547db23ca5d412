import Foundation
import LarderAPI
import LarderCLI
import LarderJSON
import LarderWire
import Testing

/// Text a server sent never reaches the terminal raw: ids, versions, reflection names, hints,
/// delete messages, tables and JSON, against a server whose strings hold escape sequences.
@Suite("Server text is escaped")
struct ServerTextTests {
    let evil = HostileText.evil
    let escaped = HostileText.escaped

    /// Runs `arguments`, answering its calls with `replies` in order.
    func run(_ arguments: [String], _ replies: [any ProtoMessage]) async throws -> CLIRun {
        let server = try FakeServer()
        return try await CLIRunner.run(arguments, server: server) { requests in
            for reply in replies {
                let request = try #require(await requests.next())
                server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
            }
        }
    }

    @Test("-o ids prints each id on its own line, escaped")
    func ids() async throws {
        let reply = ListLocationsResponse(locations: [Location(id: evil), Location(id: "\n\nxxx"), Location(id: "plain")])
        let result = try await run(["-o", "ids", "locations", "list"], [reply])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(escaped)\n\\u{A}\\u{A}xxx\nplain\n")
        let methods = ListServicesResponse(services: [ServiceInfo(name: "a.B", methods: [MethodInfo(fullName: evil)])])
        let names = try await run(["-o", "ids", "methods"], [methods])
        #expect(names.stdout == escaped + "\n")
    }

    @Test("larder version escapes the server's version, commit and protocol")
    func version() async throws {
        let info = ServerInfo(version: evil, commit: evil, protocolVersion: evil, startTime: Timestamp(seconds: 1))
        let result = try await run(["version"], [info])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(HostileText.isInert(result.stdout), "\(result.stdout.debugDescription)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty, "\(lines)")
        #expect(lines[1] == "Server Version: \(escaped) (commit \(escaped), protocol \(escaped))")
    }

    @Test("larder describe escapes every name the server sent")
    func describe() async throws {
        let method = MethodInfo(name: evil, fullName: "/a.B/" + evil, inputType: evil, outputType: evil)
        let service = ListServicesResponse(services: [ServiceInfo(name: "a.B", methods: [method])])
        let serviceRun = try await run(["describe", "a.B"], [service])
        #expect(serviceRun.status == 0, "\(serviceRun.stderr)")
        #expect(serviceRun.stdout == """
            a.B is a service:
            service B {
              rpc \(escaped) ( .\(escaped) ) returns ( .\(escaped) );
            }

            """)
        let type = DescribeTypeResponse(type: .messageType(MessageType(
            name: "x." + evil,
            fields: [FieldInfo(name: evil, jsonName: "j" + evil, number: 1, type: .message, label: .singular, typeName: evil)])))
        let typeRun = try await run(["describe", "x.Y"], [ListServicesResponse(), type])
        #expect(typeRun.status == 0, "\(typeRun.stderr)")
        #expect(typeRun.stdout == """
            x.\(escaped) is a message:
            message \(escaped) {
              .\(escaped) \(escaped) = 1;  // JSON: j\(escaped)
            }

            """)
    }

    @Test("the next-page hint on stderr escapes the page token")
    func pageTokenHint() async throws {
        let reply = ListMealRecordsResponse(mealRecords: [], nextPageToken: evil)
        let result = try await run(["meals", "list"], [reply])
        #expect(result.status == 0)
        #expect(result.stderr == "next page: add --page-token \(escaped) (or --all for every page)\n")
    }

    @Test("a delete resolved by name prints the server's id escaped")
    func deleted() async throws {
        let result = try await run(["locations", "delete", "Garage"],
                                   [ListLocationsResponse(locations: [Location(id: evil, name: "Garage")]), Empty()])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Deleted location \(escaped).\n")
    }

    @Test("tables show control characters, C1 and bidi overrides escaped, one row a line")
    func table() async throws {
        let reply = ListLocationsResponse(locations: [Location(id: "id-1", name: evil, colorHex: evil)])
        let result = try await run(["locations", "list"], [reply])
        #expect(result.status == 0)
        #expect(result.stdout == "ID    NAME\(String(repeating: " ", count: escaped.count - 2))COLOR\n"
                + "id-1  \(escaped)  \(escaped)\n")
    }

    @Test("--json stays valid JSON and escapes C0, DEL and C1 (U+009B) itself")
    func json() async throws {
        let name = evil + "\u{7F}\u{85}"
        let reply = ListLocationsResponse(locations: [Location(id: "id-1", name: name)])
        let result = try await run(["--json", "locations", "list"], [reply])
        #expect(result.status == 0)
        #expect(HostileText.isInert(result.stdout.replacingOccurrences(of: "\u{202E}", with: "")))
        #expect(result.stdout.contains(#"\u001b]0;PWNED\u0007\u001b[2J\r\u009b31m\n\nforged line"#))
        #expect(try JSONParser.parse(result.stdout)["locations"]?.arrayValue?.first?["name"] == .string(name))
    }
}
