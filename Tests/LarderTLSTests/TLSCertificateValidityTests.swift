import Foundation
import LarderTLS
import LarderTestSupport
import Testing

/// A server context reads its certificate's validity period, and the state it is in at a
/// given moment is what the server logs (`tls_certificate`).
@Suite("TLS certificate validity", .offThePool)
final class TLSCertificateValidityTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    @Test func theContextReadsItsCertificatesPeriod() throws {
        let before = Int64(Date().timeIntervalSince1970)
        let context = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                           privateKeyFile: certificates.serverKey)
        let validity = try #require(context.certificateValidity)
        #expect(validity.subject == "CN=localhost")
        // openssl x509 -days 2: from the moment it was made, for two days.
        #expect(validity.notAfter - validity.notBefore == 2 * 86_400)
        #expect(validity.notBefore <= before + 1 && validity.notBefore >= before - 600)
        #expect(validity.state(at: before) == .expiringSoon)

        let expired = try TLSServerContext(certificateChainFile: certificates.expiredServerCertificate,
                                           privateKeyFile: certificates.serverKey)
        #expect(expired.certificateValidity?.state(at: before + 1) == .expired)
    }

    /// Audit 36 L1: the period is the whole chain's: an intermediate that expired makes the
    /// chain expired, named after it, though the server's own certificate is valid.
    @Test func anExpiredIntermediateMakesTheChainExpired() throws {
        let now = Int64(Date().timeIntervalSince1970)
        let context = try TLSServerContext(certificateChainFile: try certificates.makeChainWithExpiredIntermediate(named: "chain"),
                                           privateKeyFile: certificates.serverKey)
        let validity = try #require(context.certificateValidity)
        #expect(validity.state(at: now) == .expired, "\(validity)")
        #expect(validity.subject == "CN=Expired Intermediate")
    }

    @Test func stateAndDaysLeftAtEachMoment() {
        let day: Int64 = 86_400
        let validity = TLSCertificateValidity(subject: "CN=x", notBefore: 1_000 * day, notAfter: 1_100 * day)
        #expect(validity.state(at: 1_000 * day - 1) == .notYetValid)
        #expect(validity.state(at: 1_000 * day) == .valid)
        #expect(validity.state(at: 1_086 * day - 1) == .valid)
        #expect(validity.state(at: 1_086 * day) == .expiringSoon)
        #expect(validity.state(at: 1_100 * day - 1) == .expiringSoon)
        #expect(validity.state(at: 1_100 * day) == .expired)
        #expect(validity.daysLeft(at: 1_000 * day) == 100)
        #expect(validity.daysLeft(at: 1_100 * day - 1) == 0)
        #expect(validity.daysLeft(at: 1_100 * day) == 0)
        #expect(validity.daysLeft(at: 1_100 * day + 1) == 0)
        #expect(validity.daysLeft(at: 1_101 * day + 5) == -1)
        #expect(validity.daysLeft(at: 1_102 * day) == -2)
    }
}
