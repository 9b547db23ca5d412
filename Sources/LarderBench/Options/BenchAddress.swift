import LarderWire

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
        func invalid(_ why: String) -> RPCError {
            .invalidArgument("--server \"\(text)\" \(why); expected HOST:PORT, e.g. 127.0.0.1:7411 or [::1]:7411")
        }
        var host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("has no closing ']'") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid("has no port after ']'") }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalid("has no port") }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            if host.contains(":") { throw invalid("has an IPv6 address without brackets") }
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace) else { throw invalid("has no valid host") }
        guard let number = Int(port), (1...65535).contains(number) else {
            throw invalid("has an invalid port \"\(port)\" (1-65535)")
        }
        self.init(host: String(host), port: UInt16(number))
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
