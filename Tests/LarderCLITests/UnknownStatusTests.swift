import LarderAPI
import LarderCLI
import LarderWire
import Testing

/// A status code outside gRPC's 0-16 from the server is UNKNOWN: exit 12, never the
/// `larder health` "not serving" 1 nor 10 + a number `--help` does not list.
@Suite("Unknown status codes")
struct UnknownStatusTests {
    @Test("a call answered with a code outside 0-16 exits 12 and names the code",
          arguments: [Int32(17), 99, 246, 502, -1, .max, .min])
    func callStatus(code: Int32) async throws {
        for arguments in [["locations", "list"], ["health"], ["call", "/larder.v1.LocationService/ListLocations", "{}"]] {
            let server = try FakeServer()
            let result = try await CLIRunner.run(arguments, server: server) { requests in
                let request = try #require(await requests.next())
                server.reply(ResponseEnvelope(callID: request.callID, statusCode: StatusCode(rawValue: code),
                                              statusMessage: "status \(code)"))
            }
            #expect(result.status == 12, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "UNKNOWN: status code \(code) from the server: status \(code)\n")
        }
    }

    @Test("a connection error (call id 0) with an unknown code, and one without a message")
    func connectionStatus() async throws {
        let server = try FakeServer()
        let result = try await CLIRunner.run(["locations", "list"], server: server) { requests in
            _ = try #require(await requests.next())
            server.reply(ResponseEnvelope(callID: 0, statusCode: StatusCode(rawValue: 502), statusMessage: "bye"))
        }
        #expect(result.status == 12)
        #expect(result.stderr == "UNKNOWN: status code 502 from the server: bye\n")

        let bare = try FakeServer()
        let silent = try await CLIRunner.run(["locations", "list"], server: bare) { requests in
            let request = try #require(await requests.next())
            bare.reply(ResponseEnvelope(callID: request.callID, statusCode: StatusCode(rawValue: 99)))
        }
        #expect(silent.status == 12)
        #expect(silent.stderr == "UNKNOWN: status code 99 from the server\n")
    }

    @Test("--help says what an unknown code exits with")
    func help() {
        let help = Usage.top(.larder)
        #expect(help.contains("a code outside 0-16 exits 12 (UNKNOWN); the message gives the code"))
    }
}
