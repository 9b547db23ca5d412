import LarderClient
import LarderWire
import Testing

@Suite("ServerAddress")
struct ServerAddressTests {
    @Test("valid addresses", arguments: [
        ("127.0.0.1:7411", "127.0.0.1", UInt16(7411), "127.0.0.1:7411"),
        ("localhost:1", "localhost", 1, "localhost:1"),
        ("[::1]:7411", "::1", 7411, "[::1]:7411"),
        (" example.org:65535 ", "example.org", 65535, "example.org:65535"),
    ])
    func valid(text: String, host: String, port: UInt16, description: String) throws {
        let address = try ServerAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.description == description)
    }

    @Test("invalid addresses are INVALID_ARGUMENT naming the text", arguments: [
        "", "127.0.0.1", ":7411", "host:", "host:0", "host:65536", "host:12a", "::1:7411", "[::1]", "[::1:7411",
        "[host]:7411", "host:-1",
    ])
    func invalid(text: String) {
        #expect {
            _ = try ServerAddress(parsing: text)
        } throws: { error in
            let rpc = error as? RPCError
            return rpc?.code == .invalidArgument && rpc?.message.contains("\"\(text)\"") == true
                && rpc?.message.contains("HOST:PORT") == true
        }
    }
}
