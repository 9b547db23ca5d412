import LarderWire
/// ALPN protocol names as TLS sends them: each name preceded by its length.
enum ALPNProtocols {
    /// The wire list for `names`; names that are empty or over 255 bytes are an error.
    static func wire(_ names: [String]) throws(TLSError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in names {
            let bytes = Array(name.utf8)
            guard !bytes.isEmpty && bytes.count <= 255 else {
                throw TLSError(.configuration, .invalidArgument, "ALPN protocol name \"\(name)\" must be 1 to 255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        guard wire.count <= 255 else {
            throw TLSError(.configuration, .invalidArgument, "ALPN protocol list is over 255 bytes")
        }
        return wire
    }
}
