import COpenSSL

/// An X.509 name as text (RFC 2253, "CN=alice,O=Example").
enum X509NameText {
    /// The subject of `certificate` (a borrowed `X509 *`), or nil when OpenSSL cannot print it.
    static func subject(of certificate: OpaquePointer) -> String? {
        guard let name = X509_get_subject_name(certificate), let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard larder_tls_print_name(bio, name) >= 0 else { return nil }
        let pending = larder_tls_bio_pending(bio)
        var text = [UInt8](repeating: 0, count: pending)
        let read = text.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(clamping: pending)) }
        return String(decoding: text.prefix(max(Int(read), 0)), as: UTF8.self)
    }
}
