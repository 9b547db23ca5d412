#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem
public import LarderWire

/// Where a Larder server listens: a host name or IP address and a TCP port.
///
/// Written `HOST:PORT`, with IPv6 addresses in brackets: `127.0.0.1:7411`,
/// `localhost:7411`, `[::1]:7411`.
public struct ServerAddress: Hashable, Sendable, CustomStringConvertible {
    /// Host name, IPv4 address or IPv6 address (without brackets).
    public var host: String
    public var port: UInt16

    /// The default server address, `127.0.0.1:7411`.
    public static let defaultAddress = ServerAddress(host: "127.0.0.1", port: 7411)

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[IPV6]:PORT`.
    /// - Throws: INVALID_ARGUMENT naming the text and the expected form.
    public init(parsing text: String) throws(RPCError) {
        do {
            let parsed = try HostPort(parsing: text)
            self.init(host: parsed.host, port: parsed.port)
        } catch {
            throw RPCError.invalidArgument(
                "server address \"\(text)\" \(error.reason); expected HOST:PORT, e.g. 127.0.0.1:7411 or [::1]:7411")
        }
    }

    /// True for a loopback host: `localhost`, `*.localhost`, an IPv4 address in 127.0.0.0/8 or
    /// `::1` (the name as written; a name that resolves to loopback otherwise counts as remote,
    /// and `127.example.com` is a name, not an address).
    public var isLoopback: Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    /// The warning line (with its newline) for a token about to go to this server without TLS,
    /// nil when there is none to give: no token, TLS, or a loopback host.
    public func clearTextTokenWarning(hasToken: Bool, tls: Bool) -> String? {
        guard hasToken && !tls && !isLoopback else { return nil }
        return "warning: the token goes to \(self) in clear text (no --tls): anyone on the path can read it and the "
            + "data; use --tls\n"
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
