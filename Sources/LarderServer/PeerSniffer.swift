/// Recognises peers that speak another protocol from the first bytes they send.
enum PeerSniffer {
    /// "HTTP request", "TLS handshake", "HTTP/2 preface", or nil when the bytes look like nothing known.
    static func describe(prefix: [UInt8]) -> String? {
        guard prefix.count >= 3 else { return nil }
        if prefix[0] == 0x16 && prefix[1] == 0x03 { return "TLS handshake" }
        let text = String(decoding: prefix, as: UTF8.self)
        if text.hasPrefix("PRI") { return "HTTP/2 preface" }
        for verb in ["GET", "POS", "PUT", "HEA", "DEL", "OPT", "PAT", "CON", "TRA"] where text.hasPrefix(verb) {
            return "HTTP request"
        }
        return nil
    }
}
