import Foundation
import Testing
import LarderTestSupport

/// The `larder` binary: raw argv bytes, `call -d @file` and `-d @-`, against a real server.
@Suite("larder CLI conventions over TCP", .offThePool)
struct CLIConventionsEndToEndTests {
    /// Runs `bash -c script` with the larder binary as $0 and `stdin` piped in.
    static func bash(_ script: String, server: ServerProcess, stdin: [UInt8] = []) async throws -> CLIRun {
        var environment = ProcessInfo.processInfo.environment
        environment["LARDER_SERVER"] = server.address
        environment["TZ"] = "UTC"
        environment["LARDER_TIMEOUT"] = cliTestTimeout
        return try await runProcess(URL(fileURLWithPath: "/bin/bash"),
                                    ["--norc", "--noprofile", "-c", script, try ServerProcess.binary("larder").path],
                                    environment: environment, stdin: Data(stdin))
    }

    @Test func invalidUTF8IsRefusedAndNothingIsStored() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let argument = try await Self.bash(#""$0" locations add --name $'ab\xff' --color '#AABBCC'"#, server: server)
        #expect(argument.status == 2, "\(argument.stderr)")
        #expect(argument.stderr.contains("argument 4 is not valid UTF-8 (byte 2 is 0xFF)"))
        // The environment variables larder reads too (audit 27 L11: LARDER_SERVER's 0xFF became U+FFFD, then
        // a lookup of that host); others, the server's LARDER_DB included, are not larder's to judge (review 30 M2).
        let variable = try await Self.bash(#"LARDER_SERVER=$'\xff:1' "$0" locations list"#, server: server)
        #expect(variable.status == 2, "\(variable.stderr)")
        #expect(variable.stderr.hasPrefix("larder: environment variable LARDER_SERVER is not valid UTF-8 (byte 0 is 0xFF)"),
                "\(variable.stderr)")
        let other = try await Self.bash(#"OTHER=$'\xff' LARDER_DB=$'/srv/caf\xe9.sqlite' "$0" locations list"#, server: server)
        #expect(other.status == 0, "\(other.stderr)")

        let file = server.directory.appendingPathComponent("request.json")
        try Data(#"{"location":{"name":"caf"#.utf8 + [0xE9] + ##"","colorHex":"#AABBCC"}}"##.utf8).write(to: file)
        let fromFile = try await Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @"$1""#
                                     .replacingOccurrences(of: "$1", with: file.path), server: server)
        #expect(fromFile.status == 2, "\(fromFile.stderr)")
        #expect(fromFile.stderr.contains("is not valid UTF-8"))
        let fromStdin = try await Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @-"#, server: server,
                                      stdin: Array(#"{"location":{"name":"caf"#.utf8) + [0xE9] + Array(##"","colorHex":"#AABBCC"}}"##.utf8))
        #expect(fromStdin.status == 2, "\(fromStdin.stderr)")

        let list = try await Self.bash(#""$0" -o json locations list"#, server: server)
        #expect(list.status == 0)
        // Names only: the ids are hex UUIDs, in which "caf" can occur.
        #expect(!list.stdout.contains("\"name\": \"caf") && !list.stdout.contains("\u{FFFD}")
            && !list.stdout.contains("\"name\": \"ab"))

        let valid = try await Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @-"#, server: server,
                                  stdin: Array(##"{"location":{"name":"café","colorHex":"#AABBCC"}}"##.utf8))
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(valid.stdout.contains("café"))
        // A UTF-8 byte-order mark (Notepad saves one) is skipped, from a file and from stdin.
        let bomFile = server.directory.appendingPathComponent("bom.json")
        try Data([0xEF, 0xBB, 0xBF] + Array(##"{"location":{"name":"Bom shelf","colorHex":"#AABBCC"}}"##.utf8)).write(to: bomFile)
        let bom = try await Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @"$1""#
                                      .replacingOccurrences(of: "$1", with: bomFile.path), server: server)
        #expect(bom.status == 0 && bom.stdout.contains("Bom shelf"), "\(bom.stderr)")
        let bomStdin = try await Self.bash(#""$0" call /larder.v1.LocationService/GetLocation -d @-"#, server: server,
                                           stdin: [0xEF, 0xBB, 0xBF] + Array(#"{"id":"Bom shelf"}"#.utf8))
        #expect(bomStdin.status != 2, "\(bomStdin.stderr)")
        let byName = try await Self.bash(#""$0" -o ids locations get café --timeout 60s"#, server: server)
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(byName.stdout.count == 37)
    }

    /// A full disk or a closed stdout is not success: `larder --json … > file` must be able to
    /// tell a cut-off file (larder exited 0 and said nothing; larder bench trapped in FileHandle).
    @Test func outputThatCannotBeWrittenExits3AndSaysSo() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        _ = try await Self.bash(#""$0" locations add --name Pantry --color '#AABBCC' > /dev/null"#, server: server)
        for redirect in ["> /dev/full", ">&-"] {
            for command in ["--json locations list", "-o ids locations list", "locations list", "health"] {
                let run = try await Self.bash(#""$0" "# + command + " " + redirect, server: server)
                #expect(run.status == 3, "\(command) \(redirect): \(run.status) \(run.stderr)")
                #expect(run.stderr.contains("larder: cannot write the output ("), "\(run.stderr)")
                #expect(run.stderr.contains(redirect == ">&-" ? "Bad file descriptor" : "No space left on device"))
            }
        }
        // A command that fails keeps its own status (a closed stdout used to make every status 3).
        let usage = try await Self.bash(#""$0" locations list --bogus >&-"#, server: server)
        #expect(usage.status == 2, "\(usage.stderr)")
        let bench = try await Self.bash(#""$0" bench --workload ping --requests 50 --warmup 0s --json > /dev/full"#,
                                        server: server)
        #expect(bench.status == 3, "\(bench.stderr)")
        #expect(bench.stderr.contains("larder bench: cannot write the report to stdout (No space left on device)"))
        #expect(!bench.stderr.contains("Fatal error"))
        let written = try await Self.bash(#""$0" --json locations list"#, server: server)
        #expect(written.status == 0 && written.stdout.contains("Pantry"), "\(written.stderr)")
    }
}
