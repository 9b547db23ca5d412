import LarderWire
import COpenSSL

/// What a server asks of its clients' certificates.
public enum TLSClientAuthentication: String, Sendable, CaseIterable {
    /// A client without a certificate is refused.
    case require
    /// A client may present a certificate (verified against the client CA) or none.
    case optional
}

/// A server's TLS configuration: its certificate chain and key, optionally a CA for client
/// certificates, TLS 1.2 (ECDHE with AEAD ciphers) and 1.3, no renegotiation, session
/// resumption from tickets only (no session cache; not for a client certificate that has
/// expired since), and ALPN selection among the protocols it serves.
///
/// Immutable once made; shared by every session it makes, on any thread.
public final class TLSServerContext: Sendable {
    let handle: SSLContextHandle
    /// The ALPN names this server selects from, in its order of preference.
    public let protocols: [String]
    /// The client certificate policy, or nil when no client CA was given.
    public let clientAuthentication: TLSClientAuthentication?
    /// When the whole chain the server sends is valid (its certificate and intermediates: see
    /// `chainValidity`); nil if OpenSSL cannot read the certificate's times.
    public let certificateValidity: TLSCertificateValidity?

    /// Loads `certificateChainFile` and `privateKeyFile` (PEM); with `clientCAFile`, clients
    /// are asked for a certificate signed by it (`clientAuthentication` says whether it is required).
    ///
    /// `previous`: the context this one replaces (a reload). Its session ticket keys carry
    /// over, so tickets it issued still resume here, unless the client certificate policy or
    /// CA changed: a session's context identifier covers both, and a ticket whose client
    /// certificate was verified under other rules gets a full handshake instead.
    public init(certificateChainFile: String, privateKeyFile: String, clientCAFile: String? = nil,
                clientAuthentication: TLSClientAuthentication = .optional,
                protocols: [String] = ["h2", "larder"], replacing previous: TLSServerContext? = nil) throws(TLSError) {
        let handle = try SSLContextHandle(server: true)
        try handle.useCertificate(chainFile: certificateChainFile, keyFile: privateKeyFile)
        // Resumed sessions must come from this server's own sessions under the same client
        // certificate rules (OpenSSL compares the identifier a session was made under).
        let sessionContext = try Self.sessionIDContext(clientCAFile: clientCAFile, clientAuthentication: clientAuthentication)
        guard SSL_CTX_set_session_id_context(handle.pointer, sessionContext, UInt32(sessionContext.count)) == 1 else {
            throw TLSError(.configuration, .internal, "cannot set the TLS session context", detail: OpenSSLErrorQueue.takeText())
        }
        larder_tls_ctx_disable_server_cache(handle.pointer)
        guard larder_tls_ctx_check_resumed_certificates(handle.pointer) == 1 else {
            throw TLSError(.configuration, .internal, "cannot set the session ticket callback", detail: OpenSSLErrorQueue.takeText())
        }
        if let previous { try handle.adoptTicketKeys(of: previous.handle) }
        if let clientCAFile {
            try handle.trust(caFile: clientCAFile)
            OpenSSLErrorQueue.clear()
            guard let names = SSL_load_client_CA_file(clientCAFile) else {
                throw TLSError(.configuration, .failedPrecondition,
                               "cannot read CA names from \(clientCAFile): it must hold PEM certificates",
                               detail: OpenSSLErrorQueue.takeText())
            }
            SSL_CTX_set_client_CA_list(handle.pointer, names)  // takes ownership of `names`
            let mode = clientAuthentication == .require ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER
            SSL_CTX_set_verify(handle.pointer, mode, nil)
            self.clientAuthentication = clientAuthentication
        } else {
            self.clientAuthentication = nil
        }
        handle.selectALPN(from: try ALPNProtocols.wire(protocols))
        certificateValidity = Self.chainValidity(of: handle)
        self.handle = handle
        self.protocols = protocols
    }

    /// When the whole chain the server sends is valid: from the latest notBefore to the earliest
    /// notAfter of its certificate and intermediates, named after the one that expires first (an
    /// intermediate that expired was logged `state=valid` while every client failed: audit 36 L1).
    private static func chainValidity(of handle: SSLContextHandle) -> TLSCertificateValidity? {
        guard var validity = SSL_CTX_get0_certificate(handle.pointer).flatMap({ TLSCertificateValidity(certificate: $0) })
        else { return nil }
        guard let chain = larder_tls_ctx_chain(handle.pointer) else { return validity }
        for index in 0..<larder_tls_chain_count(chain) {
            guard let certificate = larder_tls_chain_certificate(chain, index),
                  let other = TLSCertificateValidity(certificate: certificate) else { continue }
            validity = validity.narrowed(by: other)
        }
        return validity
    }

    /// The session ID context: a SHA-256 over the client certificate rules (none, or the
    /// policy and the client CA file's bytes), at most `SSL_MAX_SID_CTX_LENGTH` (32) bytes.
    private static func sessionIDContext(clientCAFile: String?, clientAuthentication: TLSClientAuthentication)
        throws(TLSError) -> [UInt8] {
        var rules = Array("larder".utf8)
        if let clientCAFile {
            rules += Array(" client-ca \(clientAuthentication.rawValue) ".utf8)
            guard let bytes = FileBytes.read(clientCAFile) else {
                throw TLSError(.configuration, .failedPrecondition, "cannot read the client CA file \(clientCAFile): "
                               + (SSLContextHandle.unreadable(clientCAFile) ?? "reading it failed"))
            }
            rules += bytes
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(rules, rules.count, &digest, &length, EVP_sha256(), nil) == 1 else {
            throw TLSError(.configuration, .internal, "cannot hash the TLS session context", detail: OpenSSLErrorQueue.takeText())
        }
        return Array(digest.prefix(Int(length)))
    }

    /// A new server-side session for one connection.
    public func makeSession() throws(TLSError) -> TLSSession {
        try TLSSession(context: handle, role: .server)
    }
}
