import Foundation
import LarderTestSupport
import LarderAPI
import LarderCLI
import LarderClient
import LarderWire
import Testing

/// Issue 16 items 3-5 and issue 14 items 11-12: tables that fit, conventions, ids people type.
@Suite("CLI conventions", .offThePool)
struct ConventionsTests {
    let parser = ArgumentParser(catalog: .larder)

    static let longName = "Oatmeal with bananas, walnuts, cinnamon and a lot of honey 🍯 燕麥粥加香蕉"

    @Test("every table fits 80 columns; cut cells end in … and --wide shows them whole")
    func tablesFit() {
        let taipei = LocalTime(timeZone: TimeZone(identifier: "Asia/Taipei") ?? .gmt)
        let meal = MealRecord(id: "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10", name: Self.longName, calories: 350,
                              category: .breakfast, eatenAt: Timestamp(seconds: 1_795_996_800))
        let tables = [
            HumanOutput.mealRecords([meal], taipei, width: 80),
            HumanOutput.locations([Location(id: meal.id, name: Self.longName, colorHex: "#AABBCC")], width: 80),
            HumanOutput.categoryGroups([CategoryGroup(id: meal.id, name: Self.longName, colorHex: "#AABBCC")], width: 80),
            HumanOutput.itemCategories([ItemCategory(id: meal.id, name: Self.longName, iconName: "takeoutbag.and.cup.and.straw.fill",
                                                     categoryGroupID: meal.id)], groupNames: [meal.id: Self.longName], width: 80),
            ProtoSource.methodTable([ServiceInfo(name: "larder.v1.MealRecordService", methods: [
                MethodInfo(name: "SummarizeMealRecords", fullName: "/larder.v1.MealRecordService/SummarizeMealRecords",
                           inputType: "larder.v1.SummarizeMealRecordsRequest",
                           outputType: "larder.v1.SummarizeMealRecordsResponse")])], width: 80),
        ]
        for table in tables {
            for line in table.split(separator: "\n") {
                #expect(DisplayWidth.of(String(line)) <= 80, "\(line)")
            }
            #expect(table.contains("…"), "\(table)")
        }
        let wide = HumanOutput.mealRecords([meal], taipei, width: nil)
        #expect(wide.contains(Self.longName) && wide.contains(meal.id))
        #expect(wide.split(separator: "\n").contains { DisplayWidth.of(String($0)) > 80 })
    }

    @Test("cutting by display width keeps whole CJK characters, emoji and combining marks", arguments: [
        ("客廳客廳客廳", 7, "客廳客…"),
        ("e\u{301}e\u{301}e\u{301}e\u{301}", 3, "e\u{301}e\u{301}…"),
        ("👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧", 5, "👨‍👩‍👧👨‍👩‍👧…"),
        ("abcdef", 6, "abcdef"),
        ("abcdefghij", 5, "abcd…"),
    ])
    func truncation(text: String, width: Int, expected: String) {
        let cut = TableRenderer.truncate(text, to: width)
        #expect(cut == expected)
        #expect(DisplayWidth.of(cut) <= width)
    }

    @Test("a method path cut in the middle keeps its method whole, so the rows of one service stay apart", arguments: [
        ("/larder.v1.CategoryGroupService/CreateCategoryGroup", 25, "/lar…/CreateCategoryGroup"),
        ("/larder.v1.CategoryGroupService/DeleteCategoryGroup", 25, "/lar…/DeleteCategoryGroup"),
        ("/larder.v1.MealRecordService/GetMealRecord", 30, "/larder.v1.Meal…/GetMealRecord"),
        // Narrower than the method: its start, which tells Create, Get and Update apart (audit 27 L5).
        ("/larder.v1.MealRecordService/SummarizeMealRecords", 16, "…/SummarizeMeal…"),
        ("/larder.v1.MealRecordService/CreateMealRecord", 16, "…/CreateMealRec…"),
        ("/larder.v1.MealRecordService/GetMealRecord", 16, "…/GetMealRecord"),
        ("no slash here at all", 9, "no s… all"),
    ])
    func middleTruncationOfPaths(text: String, width: Int, expected: String) {
        let cut = TableRenderer.truncate(text, to: width, .middle)
        #expect(cut == expected)
        #expect(DisplayWidth.of(cut) <= width)
    }

    @Test("larder methods keeps its rows apart at 80 columns, and a service's methods at 40 (audit 27 L5)",
          arguments: [80, 40])
    func methodTableRowsStayApart(width: Int) {
        func method(_ service: String, _ name: String, _ input: String, _ output: String) -> MethodInfo {
            MethodInfo(name: name, fullName: "/\(service)/\(name)", inputType: input, outputType: output)
        }
        let services = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"].map { name in
            let package = name.dropLast(".ServerReflection".count)
            return ServiceInfo(name: name, methods: [method(name, "ServerReflectionInfo", "\(package).ServerReflectionRequest",
                                                            "\(package).ServerReflectionResponse")])
        } + [ServiceInfo(name: "larder.v1.MealRecordService", methods: ["Create", "Get", "Update"].map { verb in
            method("larder.v1.MealRecordService", "\(verb)MealRecord", "larder.v1.\(verb)MealRecordRequest", "larder.v1.MealRecord")
        })]
        let lines = ProtoSource.methodTable(services, width: width).split(separator: "\n").map(String.init)
        let methods = lines.filter { $0.hasPrefix("/") || $0.hasPrefix("…") }.map { line in
            String(line.prefix { $0 != " " })
        }
        #expect(methods.count == 5)
        if width == 80 {
            #expect(Set(methods).count == 5, "\(lines)")
            #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 }, "\(lines)")
        } else {
            // Too narrow for the services (the columns' 16 are more than 40 already): the methods
            // of one service still differ.
            #expect(Set(methods.suffix(3)).count == 3, "\(lines)")
        }
    }

    @Test("meals list at COLUMNS=80 fits; the next-page hint goes to stderr; -o ids prints only ids")
    func columnsAndHints() async throws {
        let meal = MealRecord(id: "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10", name: Self.longName, calories: 350,
                              category: .breakfast, eatenAt: Timestamp(seconds: 1_795_996_800))
        let reply = ListMealRecordsResponse(mealRecords: [meal], nextPageToken: "tok")
        let server = try FakeServer()
        let result = try await CLIRunner.run(["meals", "list"], server: server, environment: ["COLUMNS": "80"]) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").allSatisfy { DisplayWidth.of(String($0)) <= 80 })
        #expect(!result.stdout.contains("tok"))
        #expect(result.stderr == "next page: add --page-token tok (or --all for every page)\n")

        let idsServer = try FakeServer()
        let ids = try await CLIRunner.run(["-o", "ids", "meals", "list"], server: idsServer) { requests in
            let request = try #require(await requests.next())
            idsServer.reply(ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(reply)))
        }
        #expect(ids.stdout == meal.id + "\n")
    }

    @Test("-o ids on a command whose result has no ids is a usage error, before any call", arguments: [
        ["version"], ["version", "--client"], ["health"], ["stats"], ["describe", "larder.v1.LocationService"],
        ["call", "/larder.v1.LocationService/ListLocations", "-d", "{}"],
        ["meals", "summary", "--since", "2026-11-01", "--until", "2026-12-01"],
    ])
    func idsOnlyWhereThereAreIDs(command: [String]) async throws {
        // No server: a command that got as far as calling would fail to connect instead.
        let result = try await CLIRunner.run(["-o", "ids", "--server", "127.0.0.1:1"] + command, server: nil)
        let path = "larder " + command.prefix { !$0.hasPrefix("-") && !$0.contains(".") }.joined(separator: " ")
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("larder: -o ids: '\(path)' prints no ids; use -o table or -o json\n"),
                "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("output to a pipe or a file is never cut, whatever COLUMNS says; a sink without a descriptor uses COLUMNS")
    func pipesAreNotCut() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        let file = open("/dev/null", O_WRONLY)
        defer {
            close(ends[0])
            close(ends[1])
            close(file)
        }
        for fd in [ends[1], file] {
            #expect(TerminalWidth.columns(of: OutputSink(fileDescriptor: fd) { _ in }, environment: ["COLUMNS": "80"]) == nil)
        }
        #expect(TerminalWidth.columns(of: OutputSink { _ in }, environment: ["COLUMNS": "80"]) == 80)
    }

    @Test("durations for --timeout and LARDER_TIMEOUT", arguments: [
        ("2s", Duration.seconds(2)), ("500ms", .milliseconds(500)), ("1m", .seconds(60)), ("1m30s", .seconds(90)),
        ("2.5", .milliseconds(2500)), ("1.5s", .milliseconds(1500)),
    ])
    func durations(text: String, expected: Duration) throws {
        guard case .run(_, let globals) = try parser.parse(["health", "--timeout", text]) else {
            Issue.record("expected a command")
            return
        }
        #expect(globals.timeout == expected)
        guard case .run(_, let fromEnvironment) = try parser.parse(["health"], environment: ["LARDER_TIMEOUT": text]) else {
            Issue.record("expected a command")
            return
        }
        #expect(fromEnvironment.timeout == expected)
    }

    @Test("-H metadata, --token-file, -o and --wide are global options")
    func globals() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cli-token-\(UUID().uuidString)")
        try "s3cret\n".write(to: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        guard case .run(_, let globals) = try parser.parse(
            ["locations", "list", "-H", "X-Request-Id: abc 1", "--header=tenant:home", "--token-file", file.path,
             "-o", "json", "--wide"]) else {
            Issue.record("expected a command")
            return
        }
        #expect(globals.metadata == ["x-request-id": "abc 1", "tenant": "home"])
        #expect(globals.token == "s3cret")
        #expect(globals.output == .json && globals.json && globals.wide)
        #expect(throws: CLIError.self) { try parser.parse(["health", "-H", "no colon"]) }
        #expect(throws: CLIError.self) { try parser.parse(["health", "-o", "yaml"]) }
        #expect(throws: CLIError.self) { try parser.parse(["health", "--token-file", "/nonexistent/token"]) }
        #expect(throws: CLIError.self) { try parser.parse(["health", "--token", "a", "--token-file", file.path]) }
    }

    @Test("-H metadata is sent with the call")
    func metadataSent() async throws {
        let server = try FakeServer()
        let result = try await CLIRunner.run(["health", "-H", "x-trace: t-1"], server: server) { requests in
            let request = try #require(await requests.next())
            #expect(request.metadata["x-trace"] == "t-1")
            server.reply(ResponseEnvelope(callID: request.callID,
                                          payload: ProtoCodec.encode(HealthCheckResponse(status: .serving))))
        }
        #expect(result.status == 0)
    }

    @Test("larder help of an unknown command is a usage error, exit 2, and so is --help beside one", arguments: [
        ["help", "frobnicate"], ["help", "meals", "frobnicate"], ["help", "health", "x"],
        ["frobnicate", "--help"], ["meals", "frobnicate", "-h"],
    ])
    func helpUnknown(arguments: [String]) async throws {
        let result = try await CLIRunner.run(arguments, server: nil)
        #expect(result.status == 2)
        #expect(result.stdout == "")
        #expect(result.stderr.contains("unknown command") || result.stderr.contains("has no subcommand"))
    }

    @Test("server field names become the flags the user typed")
    func fieldFlags() async throws {
        let server = try FakeServer()
        let result = try await CLIRunner.run(["locations", "add", "--name", "x", "--color", "red"],
                                             server: server) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID, error: .invalidArgument(
                "location.color_hex must be #RRGGBB, got \"location.color_hex\"")))
        }
        #expect(result.status == 13)
        #expect(result.stderr == "INVALID_ARGUMENT: --color must be #RRGGBB, got \"location.color_hex\"\n")
    }

    @Test("a server's message is printed with its control characters escaped, the rest as it is")
    func serverMessagesAreEscaped() async throws {
        let server = try FakeServer()
        let result = try await CLIRunner.run(["locations", "get", "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10"],
                                             server: server) { requests in
            let request = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: request.callID, error: .notFound(
                "location \"\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m客廳\u{202E}\" not found")))
        }
        #expect(result.status == 15)
        #expect(result.stderr == #"NOT_FOUND: location "\u{1B}]0;pwned\u{7}\u{1B}[2J\u{9B}31m客廳\u{202E}" not found"# + "\n")
    }

    @Test("ids: a unique prefix of 8+ characters or the exact name; ambiguity lists the candidates")
    func idResolution() async throws {
        let locations = ListLocationsResponse(locations: [
            Location(id: "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10", name: "客廳", colorHex: "#AABBCC"),
            Location(id: "6f1c2d9e-ffff-4c1e-9a53-0d2b8c7e5f11", name: "廚房", colorHex: "#AABBCC"),
            Location(id: "0d2b8c7e-5f10-4c1e-9a53-6f1c2d9e4b7a", name: "00112233445566778899aabbccddeeff",
                     colorHex: "#AABBCC"),
        ])
        func run(_ text: String, answerGet: Bool) async throws -> (CLIRun, String?) {
            let server = try FakeServer()
            let sentID = Locked<String?>(nil)
            let result = try await CLIRunner.run(["locations", "get", text], server: server) { requests in
                let list = try #require(await requests.next())
                #expect(list.method == "/larder.v1.LocationService/ListLocations")
                server.reply(ResponseEnvelope(callID: list.callID, payload: ProtoCodec.encode(locations)))
                guard answerGet, let get = await requests.next() else { return }
                let id = try ProtoCodec.decode(GetLocationRequest.self, from: get.payload).id
                sentID.set(id)
                let location = locations.locations.first { $0.id == id } ?? Location()
                server.reply(ResponseEnvelope(callID: get.callID, payload: ProtoCodec.encode(location)))
            }
            return (result, sentID.value)
        }
        let (byName, nameID) = try await run("廚房", answerGet: true)
        #expect(byName.status == 0 && nameID == "6f1c2d9e-ffff-4c1e-9a53-0d2b8c7e5f11")
        // Spaces around a name, which the server trims from the names it stores.
        let (spaced, spacedID) = try await run("  廚房\u{3000}", answerGet: true)
        #expect(spaced.status == 0 && spacedID == "6f1c2d9e-ffff-4c1e-9a53-0d2b8c7e5f11", "\(spaced.stderr)")
        let (byPrefix, prefixID) = try await run("6F1C2D9E-4B7A", answerGet: true)
        #expect(byPrefix.status == 0 && prefixID == "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")
        let (cut, cutID) = try await run("6f1c2d9e-4b…", answerGet: true)
        #expect(cut.status == 0 && cutID == "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")
        // Without dashes, as some tools print a UUID (audit 27 L10): a prefix of the hex digits.
        let (dashless, dashlessID) = try await run("6F1C2D9E4B7A", answerGet: true)
        #expect(dashless.status == 0 && dashlessID == "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")
        let (wholeDashless, wholeDashlessID) = try await run("6F1C2D9E4B7A4C1E9A530D2B8C7E5F10", answerGet: true)
        #expect(wholeDashless.status == 0 && wholeDashlessID == "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")
        // A name of 32 hex digits is still a name (review 30 L5), not an id that matches nothing.
        let (hexName, hexNameID) = try await run("00112233445566778899aabbccddeeff", answerGet: true)
        #expect(hexName.status == 0 && hexNameID == "0d2b8c7e-5f10-4c1e-9a53-6f1c2d9e4b7a", "\(hexName.stderr)")
        let (ambiguous, _) = try await run("6f1c2d9e", answerGet: false)
        #expect(ambiguous.status == 2)
        #expect(ambiguous.stderr.contains("matches 2 locations"))
        #expect(ambiguous.stderr.contains("6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10") && ambiguous.stderr.contains("廚房"))
        let (missing, _) = try await run("玄關", answerGet: false)
        #expect(missing.status == 15)
        #expect(missing.stderr.hasPrefix("NOT_FOUND: ID: no location has the name \"玄關\""))
    }

    @Test("a full id is sent as it is, in lower case, with no lookup; a meal's also as 32 hex digits alone")
    func fullIDs() async throws {
        let server = try FakeServer()
        let result = try await CLIRunner.run(["meals", "get", "6F1C2D9E4B7A4C1E9A530D2B8C7E5F10"],
                                             server: server) { requests in
            let get = try #require(await requests.next())
            #expect(get.method == "/larder.v1.MealRecordService/GetMealRecord")
            let id = try ProtoCodec.decode(GetMealRecordRequest.self, from: get.payload).id
            #expect(id == "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")
            server.reply(ResponseEnvelope(callID: get.callID, payload: ProtoCodec.encode(
                MealRecord(id: id, name: "toast", calories: 120, category: .breakfast))))
        }
        #expect(result.status == 0, "\(result.stderr)")
        let locationServer = try FakeServer()
        let location = try await CLIRunner.run(["locations", "get", "6F1C2D9E-4B7A-4C1E-9A53-0D2B8C7E5F10"],
                                               server: locationServer) { requests in
            let get = try #require(await requests.next())
            #expect(get.method == "/larder.v1.LocationService/GetLocation")
            let id = try ProtoCodec.decode(GetLocationRequest.self, from: get.payload).id
            #expect(id == "6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10")
            locationServer.reply(ResponseEnvelope(callID: get.callID, payload: ProtoCodec.encode(
                Location(id: id, name: "客廳", colorHex: "#AABBCC"))))
        }
        #expect(location.status == 0, "\(location.stderr)")
    }

    @Test("arguments that are not UTF-8 are refused, naming the argument")
    func invalidUTF8Arguments() async {
        let bad: [[UInt8]] = [Array("locations".utf8), Array("add".utf8), Array("--name".utf8), [0x61, 0x62, 0xFF]]
        guard case .failure(let failure) = UTF8Check.decode(bad) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.index == 3 && failure.offset == 2 && failure.byte == 0xFF)
        #expect(UTF8Check.firstInvalidOffset(Array("café 客廳 👨‍👩‍👧".utf8)) == nil)
        #expect(UTF8Check.firstInvalidOffset([0x63, 0x61, 0x66, 0xE9]) == 3)
        #expect(UTF8Check.firstInvalidOffset([0xED, 0xA0, 0x80]) == 0)  // a UTF-16 surrogate
        #expect(UTF8Check.firstInvalidOffset([0xC0, 0xAF]) == 0)  // overlong
    }

    @Test("bash completion from the catalog: compgen in a real bash")
    func bashCompletion() throws {
        let script = ShellCompletion.script(.bash, catalog: .larder)
        func complete(_ words: [String]) throws -> [String] {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let program = script + "\nCOMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _larder; "
                + "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
            let process = SpawnedProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["--norc", "--noprofile", "-c", program]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            #expect(process.exitStatus() == 0)
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(try complete(["larder", "me"]) == ["meals", "methods"])
        #expect(try complete(["larder", "meals", ""]) == ["list", "get", "add", "update", "delete", "summary"])
        #expect(try complete(["larder", "--server", "h:1", "meals", "add", "--cal"]) == ["--calories"])
        #expect(try complete(["larder", "--server", "h:1", "meals", "add", "--cat"]) == ["--category"])
        #expect(try complete(["larder", "--tl"]) == ["--tls"])
        #expect(try complete(["larder", "meals", "add", "--category", "l"]) == ["lunch"])
        #expect(try complete(["larder", "-o", ""]) == ["table", "json", "ids"])
        #expect(try complete(["larder", "completion", ""]) == ["bash", "zsh", "fish"])
        #expect(try complete(["larder", "call", "/x", "-"]).contains("-d"))
        // bench has flags of its own (audit 8: it completed nothing).
        #expect(try complete(["larder", "bench", "--work"]) == ["--workload"])
        #expect(try complete(["larder", "bench", "--concurrency", "8", "--workload", "c"]) == ["create"])
        #expect(try complete(["larder", "bench", "--protocol", ""]) == ["lean", "grpc"])
        #expect(try complete(["larder", "bench", "-o", "/etc/hostn"]) == ["/etc/hostname"], "a file, not -o's formats")
        #expect(try complete(["larder", "bench", "--concurrency", ""]) == [])
    }

    @Test("zsh and fish scripts name every command")
    func otherShells() {
        for shell in [ShellCompletion.Shell.zsh, .fish] {
            let script = ShellCompletion.script(shell, catalog: .larder)
            for resource in CommandCatalog.larder.resources {
                #expect(script.contains(resource.name))
                for command in resource.commands { #expect(script.contains(command.name)) }
            }
        }
    }
}

/// A value behind a lock, for results captured in `serve` closures.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}
