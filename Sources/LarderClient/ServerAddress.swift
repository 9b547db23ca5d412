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

    /// True for a loopback host: `localhost`, `127.x.x.x`, `::1` (the name as written; a name
    /// that resolves to loopback otherwise counts as remote).
    public var isLoopback: Bool {
        let name = host.lowercased()
        return name == "localhost" || name.hasSuffix(".localhost") || name.hasPrefix("127.") || name == "::1"
            || name == "0:0:0:0:0:0:0:1"
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
