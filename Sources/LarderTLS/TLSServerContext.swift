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
/// certificates, TLS 1.2 and 1.3 with OpenSSL's defaults, no renegotiation, session
/// resumption (cache and tickets), and ALPN selection among the protocols it serves.
///
/// Immutable once made; shared by every session it makes, on any thread.
public final class TLSServerContext: Sendable {
    let handle: SSLContextHandle
    /// The ALPN names this server selects from, in its order of preference.
    public let protocols: [String]
    /// The client certificate policy, or nil when no client CA was given.
    public let clientAuthentication: TLSClientAuthentication?

    /// Loads `certificateChainFile` and `privateKeyFile` (PEM); with `clientCAFile`, clients
    /// are asked for a certificate signed by it (`clientAuthentication` says whether it is required).
    public init(certificateChainFile: String, privateKeyFile: String, clientCAFile: String? = nil,
                clientAuthentication: TLSClientAuthentication = .optional,
                protocols: [String] = ["h2", "larder"]) throws(TLSError) {
        let handle = try SSLContextHandle(server: true)
        try handle.useCertificate(chainFile: certificateChainFile, keyFile: privateKeyFile)
        // Resumed sessions must come from this server's own sessions (needed with client certificates).
        let sessionContext = Array("larder".utf8)
        _ = SSL_CTX_set_session_id_context(handle.pointer, sessionContext, UInt32(sessionContext.count))
        larder_tls_ctx_enable_server_cache(handle.pointer)
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
        self.handle = handle
        self.protocols = protocols
    }

    /// A new server-side session for one connection.
    public func makeSession() throws(TLSError) -> TLSSession {
        try TLSSession(context: handle, role: .server)
    }
}
