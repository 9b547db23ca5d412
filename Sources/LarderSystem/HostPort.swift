/// A `HOST:PORT` address as written on a command line: a host name, an IPv4
/// address or an IPv6 address (in brackets when written), and a TCP port.
///
/// The one parser behind the server's `--listen`, the client's `ServerAddress`
/// and the bench's `--server`: `127.0.0.1:7411`, `localhost:7411`, `[::1]:7411`.
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    /// Host name, IPv4 address or IPv6 address (without brackets).
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[IPV6]:PORT`, ignoring whitespace around it.
    /// - Parameter allowsPortZero: accept port 0 ("any free port", for listening).
    /// - Throws: `HostPortError` saying what is wrong, e.g. "has no port".
    public init(parsing text: String, allowsPortZero: Bool = false) throws(HostPortError) {
        var trimmed = text[...]
        while let first = trimmed.first, first.isWhitespace { trimmed.removeFirst() }
        while let last = trimmed.last, last.isWhitespace { trimmed.removeLast() }
        if let scheme = trimmed.firstRange(of: "://") {
            throw HostPortError("is a URL: give HOST:PORT without \"\(trimmed[..<scheme.upperBound])\" "
                                + "(TLS is --tls, not https://)")
        }
        let host: Substring
        let portText: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw HostPortError("has no closing ']'") }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { throw HostPortError("has no port after ']'") }
            portText = rest.dropFirst()
            guard host.contains(":") else { throw HostPortError("puts a non-IPv6 host in brackets") }
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else { throw HostPortError("has no port") }
            host = trimmed[..<colon]
            portText = trimmed[trimmed.index(after: colon)...]
            if host.contains(":") { throw HostPortError("has an IPv6 address without brackets") }
        }
        guard !host.isEmpty else { throw HostPortError("has no host") }
        guard !host.contains(where: { $0.isWhitespace || $0 == "/" }) else { throw HostPortError("has an invalid host") }
        let lowest = allowsPortZero ? 0 : 1
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (lowest...65535).contains(port)
        else { throw HostPortError("has an invalid port \"\(portText)\" (\(lowest)-65535)") }
        self.init(host: String(host), port: UInt16(port))
    }

    /// True for an IPv6 host (written in brackets).
    public var isIPv6: Bool { host.contains(":") }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why a `HOST:PORT` text did not parse, as a phrase that follows the text:
/// `"nohost" has no port`.
public struct HostPortError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
