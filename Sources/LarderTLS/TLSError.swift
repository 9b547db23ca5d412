public import LarderWire

/// Why a TLS context could not be built or a handshake or record failed, with the gRPC
/// status a caller reports and a message that says what to do about it.
///
/// `detail` is OpenSSL's own text (for logs); `message` already includes what matters of it.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure: extensible, so adding one breaks no caller.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case configuration, untrustedCertificate, expiredCertificate, notYetValidCertificate, hostnameMismatch
            case clientCertificateRequired, certificateRejected, notTLS, handshakeFailed, protocolError, closed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A certificate, key or CA file could not be used.
        public static let configuration = Reason(.configuration)
        /// The peer's certificate chain does not end at a trusted CA.
        public static let untrustedCertificate = Reason(.untrustedCertificate)
        /// The peer's certificate has expired.
        public static let expiredCertificate = Reason(.expiredCertificate)
        /// The peer's certificate is not valid yet.
        public static let notYetValidCertificate = Reason(.notYetValidCertificate)
        /// The server's certificate does not list the name (or address) the client asked for.
        public static let hostnameMismatch = Reason(.hostnameMismatch)
        /// The server requires a client certificate and none was sent.
        public static let clientCertificateRequired = Reason(.clientCertificateRequired)
        /// The peer refused this side's certificate (an alert from the other end).
        public static let certificateRejected = Reason(.certificateRejected)
        /// The bytes received are not TLS at all (a cleartext peer, garbage).
        public static let notTLS = Reason(.notTLS)
        /// The handshake failed for another reason (no common version or cipher, ...).
        public static let handshakeFailed = Reason(.handshakeFailed)
        /// A record after the handshake was malformed or could not be decrypted.
        public static let protocolError = Reason(.protocolError)
        /// The session was already shut down.
        public static let closed = Reason(.closed)

        public var description: String { value.rawValue }
    }

    public var reason: Reason
    public var code: StatusCode
    public var message: String
    /// OpenSSL's error text, for the log; empty when OpenSSL said nothing.
    public var detail: String

    public init(_ reason: Reason, _ code: StatusCode, _ message: String, detail: String = "") {
        self.reason = reason
        self.code = code
        self.message = message
        self.detail = detail
    }

    /// The same failure as the RPC error a caller reports.
    public var rpcError: RPCError { RPCError(code, message, cause: detail.isEmpty ? nil : self) }

    public var description: String {
        detail.isEmpty ? "\(code.name): \(message)" : "\(code.name): \(message) [\(detail)]"
    }
}
