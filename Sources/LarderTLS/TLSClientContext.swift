import LarderWire
import COpenSSL

/// A client's TLS configuration: whom it trusts, what it offers by ALPN, and optionally
/// its own certificate. Immutable once made; shared by every session it makes, on any thread.
public final class TLSClientContext: Sendable {
    /// How the server's certificate is checked.
    public enum Verification: Sendable, Equatable {
        /// Against the system's trust store (Debian: /etc/ssl/certs).
        case systemTrustStore
        /// Against the CA certificates in a PEM file.
        case caFile(String)
        /// Not at all: anyone in the path can impersonate the server. Never a default.
        case insecureSkipVerify
    }

    let handle: SSLContextHandle
    public let verification: Verification
    let alpnWire: [UInt8]

    /// `certificateChainFile` and `privateKeyFile`: a client certificate, for servers that ask for one.
    public init(verification: Verification = .systemTrustStore, protocols: [String] = ["larder"],
                certificateChainFile: String? = nil, privateKeyFile: String? = nil) throws(TLSError) {
        let handle = try SSLContextHandle(server: false)
        switch verification {
        case .systemTrustStore:
            OpenSSLErrorQueue.clear()
            guard SSL_CTX_set_default_verify_paths(handle.pointer) == 1 else {
                throw TLSError(.configuration, .failedPrecondition,
                               "cannot load the system trust store: install ca-certificates or pass --ca FILE",
                               detail: OpenSSLErrorQueue.takeText())
            }
            SSL_CTX_set_verify(handle.pointer, SSL_VERIFY_PEER, nil)
        case .caFile(let path):
            try handle.trust(caFile: path)
            SSL_CTX_set_verify(handle.pointer, SSL_VERIFY_PEER, nil)
        case .insecureSkipVerify:
            SSL_CTX_set_verify(handle.pointer, SSL_VERIFY_NONE, nil)
        }
        switch (certificateChainFile, privateKeyFile) {
        case (let chain?, let key?):
            try handle.useCertificate(chainFile: chain, keyFile: key)
        case (nil, nil):
            break
        default:
            throw TLSError(.configuration, .invalidArgument, "a client certificate needs both its chain file and its key file")
        }
        larder_tls_ctx_enable_client_cache(handle.pointer)
        self.alpnWire = try ALPNProtocols.wire(protocols)
        self.handle = handle
        self.verification = verification
    }

    /// A new client-side session for one connection to `serverName` (a DNS name or an IP
    /// address: sent as SNI when a name, and what the certificate must match); `resuming`
    /// offers a session from an earlier connection to the same server.
    public func makeSession(serverName: String, resuming ticket: TLSSessionTicket? = nil) throws(TLSError) -> TLSSession {
        try TLSSession(context: handle, role: .client(serverName: serverName, verify: verification != .insecureSkipVerify,
                                                      alpn: alpnWire, ticket: ticket))
    }
}
