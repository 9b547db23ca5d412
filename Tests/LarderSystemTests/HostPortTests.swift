import LarderSystem
import Testing

@Suite("HostPort")
struct HostPortTests {
    @Test("IPv4, bracketed IPv6 and host names parse; whitespace around is ignored", arguments: [
        ("127.0.0.1:7411", "127.0.0.1", UInt16(7411), "127.0.0.1:7411"),
        ("10.1.2.3:1", "10.1.2.3", 1, "10.1.2.3:1"),
        ("[::1]:7411", "::1", 7411, "[::1]:7411"),
        ("[fe80::1%eth0]:80", "fe80::1%eth0", 80, "[fe80::1%eth0]:80"),
        ("[2001:db8::7]:65535", "2001:db8::7", 65535, "[2001:db8::7]:65535"),
        ("localhost:7411", "localhost", 7411, "localhost:7411"),
        ("db-1.example.org:5432", "db-1.example.org", 5432, "db-1.example.org:5432"),
        (" example.org:8080\n", "example.org", 8080, "example.org:8080"),
    ])
    func valid(text: String, host: String, port: UInt16, description: String) throws {
        let address = try HostPort(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.description == description)
        #expect(address.isIPv6 == host.contains(":"))
        #expect(try HostPort(parsing: address.description) == address)
    }

    @Test("each mistake is named", arguments: [
        ("127.0.0.1", "has no port"),
        ("localhost", "has no port"),
        ("", "has no port"),
        (":7411", "has no host"),
        ("[]:7411", "puts a non-IPv6 host in brackets"),
        ("[::1]", "has no port after ']'"),
        ("[::1]7411", "has no port after ']'"),
        ("[::1:7411", "has no closing ']'"),
        ("[example.org]:7411", "puts a non-IPv6 host in brackets"),
        ("::1:7411", "has an IPv6 address without brackets"),
        ("my host:7411", "has an invalid host"),
        ("a/b:7411", "has an invalid host"),
        ("host:", "has an invalid port \"\" (1-65535)"),
        ("host:0", "has an invalid port \"0\" (1-65535)"),
        ("host:65536", "has an invalid port \"65536\" (1-65535)"),
        ("host:99999999999999999999", "has an invalid port \"99999999999999999999\" (1-65535)"),
        ("host:-1", "has an invalid port \"-1\" (1-65535)"),
        ("host:+80", "has an invalid port \"+80\" (1-65535)"),
        ("host:12a", "has an invalid port \"12a\" (1-65535)"),
        ("[::1]:70000", "has an invalid port \"70000\" (1-65535)"),
        ("http://127.0.0.1:7411", "is a URL: give HOST:PORT without \"http://\" (TLS is --tls, not https://)"),
        ("https://db.example:7411/", "is a URL: give HOST:PORT without \"https://\" (TLS is --tls, not https://)"),
    ])
    func invalid(text: String, reason: String) {
        #expect(throws: HostPortError(reason)) { try HostPort(parsing: text) }
    }

    @Test("port 0 only where asked for")
    func portZero() throws {
        #expect(try HostPort(parsing: "127.0.0.1:0", allowsPortZero: true) == HostPort(host: "127.0.0.1", port: 0))
        #expect(try HostPort(parsing: "[::1]:0", allowsPortZero: true) == HostPort(host: "::1", port: 0))
        #expect(throws: HostPortError("has an invalid port \"0\" (1-65535)")) { try HostPort(parsing: "127.0.0.1:0") }
        #expect(throws: HostPortError("has an invalid port \"65536\" (0-65535)")) {
            try HostPort(parsing: "127.0.0.1:65536", allowsPortZero: true)
        }
    }
}
