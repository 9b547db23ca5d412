import Foundation
import Testing

/// The `larder` binary: raw argv bytes, `call -d @file` and `-d @-`, against a real server.
@Suite("larder CLI conventions over TCP")
struct CLIConventionsEndToEndTests {
    /// Runs `bash -c script` with the larder binary as $0 and `stdin` piped in.
    static func bash(_ script: String, server: ServerProcess, stdin: [UInt8] = []) throws -> CLIEndToEndTests.Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["--norc", "--noprofile", "-c", script, try ServerProcess.binary("larder").path]
        var environment = ProcessInfo.processInfo.environment
        environment["LARDER_SERVER"] = server.address
        environment["TZ"] = "UTC"
        process.environment = environment
        let input = Pipe(), out = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data(stdin))
        try input.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return .init(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                     stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test func invalidUTF8IsRefusedAndNothingIsStored() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let argument = try Self.bash(#""$0" locations add --name $'ab\xff' --color '#AABBCC'"#, server: server)
        #expect(argument.status == 2, "\(argument.stderr)")
        #expect(argument.stderr.contains("argument 4 is not valid UTF-8 (byte 2 is 0xFF)"))

        let file = server.directory.appendingPathComponent("request.json")
        try Data(#"{"location":{"name":"caf"#.utf8 + [0xE9] + ##"","colorHex":"#AABBCC"}}"##.utf8).write(to: file)
        let fromFile = try Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @"$1""#
                                     .replacingOccurrences(of: "$1", with: file.path), server: server)
        #expect(fromFile.status == 2, "\(fromFile.stderr)")
        #expect(fromFile.stderr.contains("is not valid UTF-8"))
        let fromStdin = try Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @-"#, server: server,
                                      stdin: Array(#"{"location":{"name":"caf"#.utf8) + [0xE9] + Array(##"","colorHex":"#AABBCC"}}"##.utf8))
        #expect(fromStdin.status == 2, "\(fromStdin.stderr)")

        let list = try Self.bash(#""$0" -o json locations list"#, server: server)
        #expect(list.status == 0)
        #expect(!list.stdout.contains("caf") && !list.stdout.contains("\u{FFFD}") && !list.stdout.contains("\"name\": \"ab"))

        let valid = try Self.bash(#""$0" call /larder.v1.LocationService/CreateLocation -d @-"#, server: server,
                                  stdin: Array(##"{"location":{"name":"café","colorHex":"#AABBCC"}}"##.utf8))
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(valid.stdout.contains("café"))
        let byName = try Self.bash(#""$0" -o ids locations get café --timeout 2s"#, server: server)
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(byName.stdout.count == 37)
    }
}
