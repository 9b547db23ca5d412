import LarderSystem
public import LarderWire

/// The server the bench talks to: `HOST:PORT`, IPv6 in brackets.
public struct BenchAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// `127.0.0.1:7411`.
    public static let defaultAddress = BenchAddress(host: "127.0.0.1", port: 7411)

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
            throw .invalidArgument("--server \"\(text)\" \(error.reason); expected HOST:PORT, e.g. 127.0.0.1:7411 or [::1]:7411")
        }
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
