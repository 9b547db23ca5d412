/// Recognises peers that speak another protocol from the first bytes they send.
enum PeerSniffer {
    /// What an HTTP/1 client (curl, a browser, a load balancer's HTTP check) gets instead of a
    /// lean error frame it could not read: a plain-text 400 naming the port's protocols.
    static let http1Refusal: [UInt8] = {
        let body = "This port speaks Larder's RPC protocols (the lean protocol, and gRPC over HTTP/2), not HTTP/1.\n"
            + "Metrics are served over HTTP on the address given by larder-server --metrics-listen.\n"
        return Array(("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)
    }()

    /// What `describe` calls an HTTP/1 request.
    static let httpRequest = "HTTP request"

    /// "HTTP request", "TLS handshake", "HTTP/2 preface", or nil when the bytes look like nothing known.
    static func describe(prefix: [UInt8]) -> String? {
        guard prefix.count >= 3 else { return nil }
        if prefix[0] == 0x16 && prefix[1] == 0x03 { return "TLS handshake" }
        let text = String(decoding: prefix, as: UTF8.self)
        if text.hasPrefix("PRI") { return "HTTP/2 preface" }
        for verb in ["GET", "POS", "PUT", "HEA", "DEL", "OPT", "PAT", "CON", "TRA"] where text.hasPrefix(verb) {
            return httpRequest
        }
        return nil
    }
}
