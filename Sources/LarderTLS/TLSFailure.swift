import LarderWire
import COpenSSL

/// Turns what OpenSSL reports about a failed handshake or record into a `TLSError` whose
/// message says what to do: which side refused what, and the flag that fixes it.
enum TLSFailure {
    /// `helloReceived`: on a server, whether the client's ClientHello was read before the
    /// failure (bytes that are not TLS then broke a handshake begun, rather than showing a
    /// client that never spoke TLS).
    static func classify(sslError: Int32, reasons: [Int32], verifyResult: Int32, isServer: Bool, serverName: String?,
                         handshakeDone: Bool, helloReceived: Bool = false, detail: String) -> TLSError {
        let peer = isServer ? "the client's" : "the server's"
        let subject = serverName.map { " for \($0)" } ?? ""
        if sslError == SSL_ERROR_SYSCALL && reasons.isEmpty {
            return TLSError(.protocolError, .unavailable, "the TLS connection ended unexpectedly", detail: detail)
        }
        if reasons.contains(SSL_R_CERTIFICATE_VERIFY_FAILED) {
            return verificationFailure(verifyResult, peer: peer, subject: subject, isServer: isServer,
                                       serverName: serverName, detail: detail)
        }
        if reasons.contains(SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
            return TLSError(.clientCertificateRequired, .unauthenticated,
                            "the client sent no certificate, and this server requires one (--tls-client-auth require)",
                            detail: detail)
        }
        if reasons.contains(SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED) {
            return TLSError(.clientCertificateRequired, .unauthenticated,
                            "the server requires a client certificate: present one signed by the server's client CA",
                            detail: detail)
        }
        let rejections = [SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
                          SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
                          SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED]
        if reasons.contains(where: rejections.contains) {
            let other = isServer ? "the client" : "the server"
            let mine = isServer ? "this server's" : "this client's"
            return TLSError(.certificateRejected, .unauthenticated,
                            "\(other) rejected \(mine) certificate (not issued by a CA it trusts, or expired)",
                            detail: detail)
        }
        let notTLS = [SSL_R_WRONG_VERSION_NUMBER, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST,
                      SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_UNKNOWN_PROTOCOL, SSL_R_RECORD_LENGTH_MISMATCH]
        if !handshakeDone && isServer && helloReceived && reasons.contains(where: notTLS.contains) {
            return TLSError(.handshakeFailed, .unavailable,
                            "TLS handshake failed after the client's ClientHello: what the client sent next was not a TLS record",
                            detail: detail)
        }
        if !handshakeDone && reasons.contains(where: notTLS.contains) {
            return TLSError(.notTLS, .unavailable,
                            isServer ? "the client did not send a TLS ClientHello"
                                : "the server did not answer with TLS: is it serving TLS on this port (--tls-cert)?",
                            detail: detail)
        }
        if !handshakeDone {
            return TLSError(.handshakeFailed, .unavailable,
                            "TLS handshake failed (no common protocol version or cipher, or a malformed message)",
                            detail: detail)
        }
        return TLSError(.protocolError, .unavailable, "TLS record error: the connection cannot continue", detail: detail)
    }

    /// A client's connection that ended without an alert (reset or closed) after the server
    /// asked for a certificate and before it sent anything: what the lost alert most likely said.
    static func abruptEndAfterCertificateRequest(sentCertificate: Bool) -> TLSError {
        if sentCertificate {
            return TLSError(.certificateRejected, .unauthenticated,
                            "the server asked for a client certificate and closed the connection after the handshake: "
                                + "it probably rejected this client's certificate (not issued by a CA it trusts, or expired)")
        }
        return TLSError(.clientCertificateRequired, .unauthenticated,
                        "the server asked for a client certificate, none was sent, and it closed the connection after "
                            + "the handshake: the server probably requires a client certificate: present one signed "
                            + "by the server's client CA")
    }

    private static func verificationFailure(_ result: Int32, peer: String, subject: String, isServer: Bool,
                                            serverName: String?, detail: String) -> TLSError {
        let fix = isServer ? "the client needs a certificate issued by --tls-client-ca"
            : "pass --ca FILE with the CA that issued it (if you gave --ca, that file holds a different CA)"
        let why = String(cString: X509_verify_cert_error_string(Int(result)))
        switch result {
        case X509_V_ERR_CERT_CHAIN_TOO_LONG where isServer:
            return TLSError(.untrustedCertificate, .unavailable,
                            "\(peer) certificate chain holds more than \(SSLContextHandle.maxClientCertificates) "
                                + "certificates: send the client's certificate and its intermediates only", detail: detail)
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return TLSError(.expiredCertificate, .unavailable,
                            "\(peer) certificate\(subject) has expired: it must be renewed", detail: detail)
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return TLSError(.notYetValidCertificate, .unavailable,
                            "\(peer) certificate\(subject) is not valid yet: check both clocks", detail: detail)
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return TLSError(.hostnameMismatch, .unavailable,
                            "\(peer) certificate is not valid for \"\(serverName ?? "")\": connect by a name the "
                                + "certificate lists, or pass --server-name NAME", detail: detail)
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_SIGNATURE_FAILURE:
            return TLSError(.untrustedCertificate, .unavailable,
                            "\(peer) certificate\(subject) is not signed by a trusted CA (\(why)): \(fix)",
                            detail: detail)
        default:
            return TLSError(.untrustedCertificate, .unavailable,
                            "\(peer) certificate\(subject) failed verification (\(why)): \(fix)", detail: detail)
        }
    }
}
