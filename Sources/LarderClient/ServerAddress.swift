import LarderWire

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
        let trimmed = text.trimmingWhitespace()
        func invalid(_ why: String) -> RPCError {
            RPCError.invalidArgument("server address \"\(text)\" \(why); expected HOST:PORT, e.g. 127.0.0.1:7411 or [::1]:7411")
        }
        let host: Substring
        let portText: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw invalid("has no closing ']'") }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid("has no port after ']'") }
            portText = rest.dropFirst()
            guard host.contains(":") else { throw invalid("puts a non-IPv6 host in brackets") }
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else { throw invalid("has no port") }
            host = trimmed[..<colon]
            portText = trimmed[trimmed.index(after: colon)...]
            if host.contains(":") { throw invalid("has an IPv6 address without brackets") }
        }
        guard !host.isEmpty else { throw invalid("has no host") }
        guard !host.contains(where: { $0.isWhitespace || $0 == "/" }) else { throw invalid("has an invalid host") }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (1...65535).contains(port)
        else { throw invalid("has an invalid port \"\(portText)\" (1-65535)") }
        self.init(host: String(host), port: UInt16(port))
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension String {
    func trimmingWhitespace() -> Substring {
        var slice = self[...]
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return slice
    }
}
