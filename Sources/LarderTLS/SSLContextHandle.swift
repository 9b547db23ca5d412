#if canImport(Glibc)
import Glibc
#endif
import LarderWire
import COpenSSL

/// Owns one `SSL_CTX`: configured in the initializer of a server or client context, then
/// only used to create sessions, which OpenSSL allows from any thread (the context is
/// reference-counted and its session cache locked), hence `@unchecked Sendable`.
final class SSLContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The ALPN list the selection callback reads (a length byte, then the wire list);
    /// freed after the context, which is the only reader.
    private var alpnSelection: UnsafeMutablePointer<UInt8>?

    init(server: Bool) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let pointer = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw TLSError(.configuration, .internal, "cannot create a TLS context", detail: OpenSSLErrorQueue.takeText())
        }
        self.pointer = pointer
        // TLS 1.2 (ECDHE with AEAD ciphers) and 1.3, the library's default groups; no renegotiation;
        // no passphrase prompt.
        guard larder_tls_ctx_set_min_version_tls12(pointer) == 1 else {
            throw TLSError(.configuration, .internal, "cannot require TLS 1.2 or later", detail: OpenSSLErrorQueue.takeText())
        }
        larder_tls_ctx_set_modes(pointer)
        guard larder_tls_ctx_set_tls12_ciphers(pointer) == 1 else {
            throw TLSError(.configuration, .internal, "cannot set the TLS 1.2 cipher suites", detail: OpenSSLErrorQueue.takeText())
        }
        larder_tls_ctx_refuse_passphrases(pointer)
        // A client's Certificate message, which OpenSSL buffers whole as soon as its header
        // announces its length: 32 KiB holds any real chain (a leaf and two intermediates are
        // 4–8 KB), where OpenSSL's 100 KiB default let each stalled mTLS handshake hold ~165 KB.
        // And at most 10 certificates in it: a chain within 32 KiB can hold 80 small ones, which
        // OpenSSL keeps parsed (~400 KB) while a client that sent it stalls before its Finished.
        if server {
            larder_tls_ctx_set_max_cert_list(pointer, Self.maxClientCertificateListBytes)
            larder_tls_ctx_bound_peer_chain(pointer, Int32(Self.maxClientCertificates))
        }
    }

    /// The largest client certificate chain a server accepts, in bytes of its Certificate message.
    static let maxClientCertificateListBytes = 32 * 1024

    /// The most certificates (the leaf included) a client's chain may hold.
    static let maxClientCertificates = 10

    deinit {
        SSL_CTX_free(pointer)
        alpnSelection?.deallocate()
    }

    /// Makes the server pick the first of `wire` (an ALPN wire list) the client offers.
    func selectALPN(from wire: [UInt8]) {
        precondition(alpnSelection == nil && wire.count <= 255)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: wire.count + 1)
        buffer[0] = UInt8(wire.count)
        for (index, byte) in wire.enumerated() { buffer[index + 1] = byte }
        alpnSelection = buffer
        larder_tls_ctx_set_alpn_select(pointer, buffer)
    }

    /// Loads the certificate chain and its private key (PEM files), and checks they match.
    func useCertificate(chainFile: String, keyFile: String) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard SSL_CTX_use_certificate_chain_file(pointer, chainFile) == 1 else {
            throw TLSError(.configuration, .failedPrecondition,
                           "cannot load the certificate chain from \(chainFile): "
                               + (Self.unreadable(chainFile) ?? "it must be readable PEM (the certificate first, then its intermediates)"),
                           detail: OpenSSLErrorQueue.takeText())
        }
        guard SSL_CTX_use_PrivateKey_file(pointer, keyFile, SSL_FILETYPE_PEM) == 1 else {
            let entries = OpenSSLErrorQueue.take()
            let detail = entries.map(\.text).joined(separator: "; ")
            if Self.unreadable(keyFile) == nil && Self.isEncryptedPEM(keyFile) {
                throw TLSError(.configuration, .failedPrecondition,
                               "cannot load the private key from \(keyFile): it is encrypted with a passphrase, which "
                                   + "larder cannot ask for: decrypt it (openssl pkey -in \(keyFile) -out plain.key) and "
                                   + "keep it readable by this user only", detail: detail)
            }
            if entries.contains(where: { $0.reason == X509_R_KEY_VALUES_MISMATCH }) {
                throw TLSError(.configuration, .failedPrecondition, keyMismatch(keyFile: keyFile, chainFile: chainFile),
                               detail: detail)
            }
            throw TLSError(.configuration, .failedPrecondition,
                           "cannot load the private key from \(keyFile): "
                               + (Self.unreadable(keyFile) ?? "it must be a readable, unencrypted PEM key"),
                           detail: detail)
        }
        guard SSL_CTX_check_private_key(pointer) == 1 else {
            throw TLSError(.configuration, .failedPrecondition, keyMismatch(keyFile: keyFile, chainFile: chainFile),
                           detail: OpenSSLErrorQueue.takeText())
        }
    }

    /// A key that does not match the chain file's first certificate; when that certificate is a
    /// CA's, the likelier mistake is the order of the chain file (audit 36 nit), and it says so.
    private func keyMismatch(keyFile: String, chainFile: String) -> String {
        let mismatch = "the private key in \(keyFile) does not belong to the certificate in \(chainFile)"
        guard let first = SSL_CTX_get0_certificate(pointer), X509_check_ca(first) > 0 else { return mismatch }
        return mismatch + ": its first certificate, \(X509NameText.subject(of: first) ?? "?"), is a CA's; the server's own "
            + "certificate must come first, then its intermediates"
    }

    /// Uses the session ticket keys of `other` (a server context this one replaces), so
    /// the tickets `other` issued decrypt here.
    func adoptTicketKeys(of other: SSLContextHandle) throws(TLSError) {
        var keys = [UInt8](repeating: 0, count: Int(LARDER_TLS_TICKET_KEYS_LENGTH))
        defer { for index in keys.indices { keys[index] = 0 } }  // secret: not left in freed memory
        OpenSSLErrorQueue.clear()
        guard larder_tls_ctx_get_ticket_keys(other.pointer, &keys) == 1,
              larder_tls_ctx_set_ticket_keys(pointer, &keys) == 1 else {
            throw TLSError(.configuration, .internal, "cannot carry the session ticket keys over",
                           detail: OpenSSLErrorQueue.takeText())
        }
    }

    /// Trusts the CAs in `caFile` (PEM) for verifying the peer.
    func trust(caFile: String) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard SSL_CTX_load_verify_locations(pointer, caFile, nil) == 1 else {
            throw TLSError(.configuration, .failedPrecondition,
                           "cannot load CA certificates from \(caFile): " + (Self.unreadable(caFile) ?? "it must be readable PEM"),
                           detail: OpenSSLErrorQueue.takeText())
        }
    }

    /// True when `path` holds an encrypted PEM private key (`ENCRYPTED PRIVATE KEY`, or a
    /// traditional key with a `Proc-Type: 4,ENCRYPTED` header).
    static func isEncryptedPEM(_ path: String) -> Bool {
        guard let bytes = FileBytes.read(path) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }

    /// Why `path` cannot be read ("no such file or directory", "permission denied"), or nil
    /// when it can: then the PEM advice of a load failure applies, and not before.
    static func unreadable(_ path: String) -> String? {
        // Opened, not only checked with access(): a process out of descriptors (EMFILE) can
        // read no file, and then that is the reason, not the file's contents.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd < 0 else {
            close(fd)
            return nil
        }
        return String(cString: strerror(errno)).lowercased()
    }
}
