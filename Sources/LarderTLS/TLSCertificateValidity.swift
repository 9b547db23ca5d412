#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// When a server's own certificate is valid, read from it when it is loaded, so the server
/// can warn its operator before (and after) clients start refusing it.
public struct TLSCertificateValidity: Sendable, Equatable {
    /// Where a certificate stands at some moment.
    public enum State: String, Sendable {
        /// Valid for longer than the warning period.
        case valid
        /// Valid, but expiring within the warning period.
        case expiringSoon = "expiring_soon"
        /// Past its notAfter: every client that verifies it refuses the handshake.
        case expired
        /// Before its notBefore: clients refuse it until then (or a clock is wrong).
        case notYetValid = "not_yet_valid"
    }

    /// How long before expiry `state(at:)` says `expiringSoon`: 14 days.
    public static let warningSeconds: Int64 = 14 * 86_400

    /// The certificate's subject (RFC 2253), or "" when it cannot be printed.
    public let subject: String
    /// notBefore and notAfter, in seconds since the Unix epoch.
    public let notBefore: Int64
    public let notAfter: Int64

    public init(subject: String, notBefore: Int64, notAfter: Int64) {
        self.subject = subject
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Reads `certificate` (a borrowed `X509 *`); nil when its times cannot be read.
    init?(certificate: OpaquePointer) {
        let now = Int64(time(nil))
        guard let notBefore = Self.secondsFromNow(to: X509_get0_notBefore(certificate)),
              let notAfter = Self.secondsFromNow(to: X509_get0_notAfter(certificate)) else { return nil }
        self.init(subject: X509NameText.subject(of: certificate) ?? "",
                  notBefore: now + notBefore, notAfter: now + notAfter)
    }

    /// The period within both this one's and `other`'s, named after whichever expires first.
    func narrowed(by other: TLSCertificateValidity) -> TLSCertificateValidity {
        TLSCertificateValidity(subject: other.notAfter < notAfter ? other.subject : subject,
                               notBefore: max(notBefore, other.notBefore), notAfter: min(notAfter, other.notAfter))
    }

    /// Where the certificate stands at `now` (seconds since the Unix epoch).
    public func state(at now: Int64) -> State {
        // Expired first: a chain's period is empty when one certificate expired before another began.
        if now >= notAfter { return .expired }
        if now < notBefore { return .notYetValid }
        return notAfter - now <= Self.warningSeconds ? .expiringSoon : .valid
    }

    /// Whole days from `now` to notAfter, rounded toward zero: -1 once it expired a full day ago.
    public func daysLeft(at now: Int64) -> Int64 { (notAfter - now) / 86_400 }

    /// Seconds from now to `time` (negative when it is past), through OpenSSL's own arithmetic.
    private static func secondsFromNow(to time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, nil, time) == 1 else { return nil }
        return Int64(days) * 86_400 + Int64(seconds)
    }
}
