import Foundation
import LarderTLS
import LarderTestSupport
import LarderWire
import Testing

/// The TLS wrapper driven in memory: both contexts, handshakes, ALPN, verification failures,
/// client certificates and resumption, with certificates made by the openssl CLI per run.
@Suite("TLS sessions in memory", .serialized, .offThePool)
final class TLSSessionTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    func serverContext(clientCA: Bool = false, auth: TLSClientAuthentication = .optional,
                       certificate: String? = nil, protocols: [String] = ["h2", "larder"]) throws -> TLSServerContext {
        try TLSServerContext(certificateChainFile: certificate ?? certificates.serverCertificate,
                             privateKeyFile: certificates.serverKey,
                             clientCAFile: clientCA ? certificates.caCertificate : nil, clientAuthentication: auth,
                             protocols: protocols)
    }

    func clientContext(_ verification: TLSClientContext.Verification? = nil, protocols: [String] = ["larder"],
                       certificate: (String, String)? = nil) throws -> TLSClientContext {
        try TLSClientContext(verification: verification ?? .caFile(certificates.caCertificate), protocols: protocols,
                             certificateChainFile: certificate?.0, privateKeyFile: certificate?.1)
    }

    @Test func handshakeThenDataBothWays() throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "localhost"),
                           server: try serverContext().makeSession())
        try pair.pump()
        #expect(pair.client.isHandshakeComplete && pair.server.isHandshakeComplete)
        #expect(pair.client.protocolVersion == "TLSv1.3")
        #expect(pair.server.negotiatedProtocol == "larder" && pair.client.negotiatedProtocol == "larder")
        #expect(pair.server.peerCertificateSubject == nil)
        #expect(pair.client.peerCertificateSubject == "CN=localhost")

        let request = Array(repeating: UInt8(7), count: 100_000)
        try pair.client.send(request)
        try pair.pump()
        #expect(pair.serverReceived == request)
        try pair.server.send([1, 2, 3])
        try pair.pump()
        #expect(pair.clientReceived == [1, 2, 3])

        pair.client.close()
        try pair.pump()
        #expect(pair.server.peerClosed)
    }

    /// After close_notify nothing the peer sends is read, nor kept: 1 MiB more leaves the
    /// session's input buffer empty and brings no plaintext.
    @Test func nothingAfterCloseNotifyIsBuffered() throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "localhost"),
                           server: try serverContext().makeSession())
        try pair.pump()
        pair.client.close()
        try pair.pump()
        #expect(pair.server.peerClosed)
        var plaintext: [UInt8] = []
        for _ in 0..<16 { try pair.server.receive([UInt8](repeating: 0x17, count: 65536), into: &plaintext) }
        #expect(plaintext.isEmpty)
        #expect(pair.server.bufferedInputBytes == 0)
    }

    /// A record per byte (a peer may cut records anywhere): every byte comes out, in order,
    /// however the ciphertext is cut into reads.
    @Test(arguments: [1, 7, 22, 23, 500, 100_000])
    func recordsOfOneByteInReadsOfAnySize(readSize: Int) throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "localhost"),
                           server: try serverContext().makeSession())
        try pair.pump()
        let message = (0..<4000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        for byte in message { try pair.client.send([byte]) }
        var ciphertext: [UInt8] = []
        pair.client.takeOutput(into: &ciphertext)
        var received: [UInt8] = []
        var offset = 0
        while offset < ciphertext.count {
            let end = min(ciphertext.count, offset + readSize)
            try pair.server.receive(Array(ciphertext[offset..<end]), into: &received)
            offset = end
        }
        #expect(received == message)
        #expect(pair.server.bufferedInputBytes == 0)
    }

    /// The record boundaries of real ciphertext (records of 1 byte, and of up to 16 KiB), cut
    /// into reads of any size: inside a record after every cut but the last.
    @Test(arguments: [1, 5, 22, 700, 100_000])
    func recordBoundariesAreFollowedAcrossReads(readSize: Int) throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "localhost"),
                           server: try serverContext().makeSession())
        try pair.pump()
        for byte in 0..<50 { try pair.client.send([UInt8(byte)]) }
        try pair.client.send([UInt8](repeating: 7, count: 40_000))
        var ciphertext: [UInt8] = []
        pair.client.takeOutput(into: &ciphertext)
        var boundary = TLSRecordBoundary()
        var offset = 0
        var plaintext: [UInt8] = []
        while offset < ciphertext.count {
            let end = min(ciphertext.count, offset + readSize)
            boundary.consume(Array(ciphertext[offset..<end]))
            plaintext.removeAll()
            try pair.server.receive(Array(ciphertext[offset..<end]), into: &plaintext)
            offset = end
            if offset < ciphertext.count && plaintext.isEmpty { #expect(boundary.isInsideRecord) }
        }
        #expect(!boundary.isInsideRecord)
    }

    @Test func byAddressVerifiesTheIPAddressName() throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "127.0.0.1"),
                           server: try serverContext().makeSession())
        try pair.pump()
        #expect(pair.client.isHandshakeComplete)
    }

    /// By the server's preference (h2, then larder), whatever order the client offers them in.
    @Test(arguments: [(["h2"], "h2"), (["larder"], "larder"), (["h2", "larder"], "h2"), (["larder", "h2"], "h2"),
                      (["http/1.1", "larder"], "larder"), (["http/1.1"], nil), ([], nil)] as [([String], String?)])
    func alpnSelection(offered: [String], selected: String?) throws {
        var pair = TLSPair(client: try clientContext(protocols: offered).makeSession(serverName: "localhost"),
                           server: try serverContext().makeSession())
        try pair.pump()
        #expect(pair.server.negotiatedProtocol == selected)
        #expect(pair.client.negotiatedProtocol == selected)
    }

    @Test func wrongCAIsRefusedWithAClearError() throws {
        var pair = TLSPair(client: try clientContext(.caFile(certificates.otherCACertificate)).makeSession(serverName: "localhost"),
                           server: try serverContext().makeSession())
        guard case .client(let error)? = pair.pumpReportingSide() else {
            Issue.record("the client accepted a certificate from a CA it does not trust")
            return
        }
        #expect(error.reason == .untrustedCertificate)
        #expect(error.code == .unavailable)
        #expect(error.message.contains("not signed by a trusted CA") && error.message.contains("--ca FILE"))
    }

    @Test func expiredCertificateIsRefused() throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "localhost"),
                           server: try serverContext(certificate: certificates.expiredServerCertificate).makeSession())
        guard case .client(let error)? = pair.pumpReportingSide() else {
            Issue.record("the client accepted an expired certificate")
            return
        }
        #expect(error.reason == .expiredCertificate)
        #expect(error.message == "the server's certificate for localhost has expired: it must be renewed")
    }

    @Test func hostnameMismatchIsRefused() throws {
        var pair = TLSPair(client: try clientContext().makeSession(serverName: "larder.example.com"),
                           server: try serverContext().makeSession())
        guard case .client(let error)? = pair.pumpReportingSide() else {
            Issue.record("the client accepted a certificate for another name")
            return
        }
        #expect(error.reason == .hostnameMismatch)
        #expect(error.message.contains("not valid for \"larder.example.com\"") && error.message.contains("--server-name"))
    }

    @Test func insecureSkipVerifyAcceptsAnything() throws {
        var pair = TLSPair(client: try clientContext(.insecureSkipVerify).makeSession(serverName: "larder.example.com"),
                           server: try serverContext(certificate: certificates.expiredServerCertificate).makeSession())
        try pair.pump()
        #expect(pair.client.isHandshakeComplete)
    }

    @Test func requiredClientCertificateIsCheckedAndReported() throws {
        let server = try serverContext(clientCA: true, auth: .require)
        var pair = TLSPair(client: try clientContext(certificate: (certificates.clientCertificate, certificates.clientKey))
                            .makeSession(serverName: "localhost"), server: try server.makeSession())
        try pair.pump()
        #expect(pair.server.peerCertificateSubject == TestCertificates.clientSubject)

        var missing = TLSPair(client: try clientContext().makeSession(serverName: "localhost"), server: try server.makeSession())
        guard case .server(let serverError)? = missing.pumpReportingSide() else {
            Issue.record("a client without a certificate got through --tls-client-auth require")
            return
        }
        #expect(serverError.reason == .clientCertificateRequired && serverError.code == .unauthenticated)
        // The client learns it from the server's alert.
        var alert: [UInt8] = []
        missing.server.takeOutput(into: &alert)
        var ignored: [UInt8] = []
        #expect(throws: TLSError.self) { try missing.client.receive(alert, into: &ignored) }
        do {
            try missing.client.receive(alert, into: &ignored)
        } catch {
            #expect(error.reason == .clientCertificateRequired)
            #expect(error.message.contains("requires a client certificate"))
        }

        var stranger = TLSPair(client: try clientContext(certificate: (certificates.strangerCertificate, certificates.strangerKey))
                                .makeSession(serverName: "localhost"), server: try server.makeSession())
        guard case .server(let strangerError)? = stranger.pumpReportingSide() else {
            Issue.record("a client certificate from an untrusted CA got through")
            return
        }
        #expect(strangerError.reason == .untrustedCertificate)
        #expect(strangerError.message.contains("the client's certificate") && strangerError.message.contains("--tls-client-ca"))
    }

    /// A client presenting its own certificate followed by `copies` copies of its CA's, to `server`.
    func pairWithChain(_ server: TLSServerContext, caCopies copies: Int) throws -> TLSPair {
        let leaf = try String(contentsOfFile: certificates.clientCertificate, encoding: .utf8)
        let path = certificates.path("chain-\(copies).pem")
        try (leaf + String(repeating: try caPEM(), count: copies)).write(toFile: path, atomically: true, encoding: .utf8)
        return TLSPair(client: try clientContext(certificate: (path, certificates.clientKey)).makeSession(serverName: "localhost"),
                       server: try server.makeSession())
    }

    func caPEM() throws -> String { try String(contentsOfFile: certificates.caCertificate, encoding: .utf8) }

    @Test func aClientCertificateChainOver32KiBIsRefused() throws {
        let server = try serverContext(clientCA: true, auth: .require)
        let caBytes = try caPEM().utf8.count
        var small = try pairWithChain(server, caCopies: 4 * 1024 / caBytes)
        try small.pump()
        #expect(small.server.peerCertificateSubject == TestCertificates.clientSubject)

        // ~44 KiB of DER: under OpenSSL's 100 KiB default, which let each stalled handshake hold it.
        var big = try pairWithChain(server, caCopies: 60 * 1024 / caBytes)
        guard case .server(let error)? = big.pumpReportingSide() else {
            Issue.record("a 44 KiB client certificate chain got through")
            return
        }
        #expect(error.detail.contains("excessive message size"), "\(error)")
    }

    /// Within 32 KiB a chain can hold 80 small certificates, which a client that then stalls
    /// kept parsed (~400 KB a handshake, audit 12): more than 10 are refused.
    @Test func aClientCertificateChainOfMoreThan10IsRefused() throws {
        let server = try serverContext(clientCA: true, auth: .require)
        var ten = try pairWithChain(server, caCopies: 9)
        try ten.pump()
        #expect(ten.server.peerCertificateSubject == TestCertificates.clientSubject)

        var eleven = try pairWithChain(server, caCopies: 10)
        guard case .server(let error)? = eleven.pumpReportingSide() else {
            Issue.record("a chain of 11 certificates got through")
            return
        }
        #expect(error.message.contains("chain holds more than 10 certificates"), "\(error)")
    }

    /// TLS 1.3: the client's handshake ends before the server checks its certificate, so the
    /// refusal comes later as an alert, or not at all when the server's close resets the
    /// connection first. Either way the client can say what happened.
    @Test func aRefusedClientCertificateIsReportedHoweverTheRefusalArrives() throws {
        let server = try serverContext(clientCA: true, auth: .require)
        // The alert read: every later use of the session reports that cause, not a record error.
        var read = TLSPair(client: try clientContext().makeSession(serverName: "localhost"), server: try server.makeSession())
        guard case .server? = read.pumpReportingSide() else {
            Issue.record("a client without a certificate got through --tls-client-auth require")
            return
        }
        #expect(read.client.isHandshakeComplete, "TLS 1.3: the client's side of the handshake is done")
        var alert: [UInt8] = []
        read.server.takeOutput(into: &alert)
        var ignored: [UInt8] = []
        #expect(throws: TLSError.self) { try read.client.receive(alert, into: &ignored) }
        do {
            try read.client.send([1])
            Issue.record("a session that received a fatal alert sent data")
        } catch {
            #expect(error.reason == .clientCertificateRequired, "\(error)")
        }
        #expect(read.client.likelyCauseOfAbruptEnd?.reason == .clientCertificateRequired)

        // The alert lost: what the handshake saw says why.
        var lost = TLSPair(client: try clientContext().makeSession(serverName: "localhost"), server: try server.makeSession())
        _ = lost.pumpReportingSide()
        let cause = try #require(lost.client.likelyCauseOfAbruptEnd)
        #expect(cause.reason == .clientCertificateRequired && cause.code == .unauthenticated)
        #expect(cause.message.contains("probably requires a client certificate"), "\(cause.message)")
        var stranger = TLSPair(client: try clientContext(certificate: (certificates.strangerCertificate, certificates.strangerKey))
                                .makeSession(serverName: "localhost"), server: try server.makeSession())
        _ = stranger.pumpReportingSide()
        let rejected = try #require(stranger.client.likelyCauseOfAbruptEnd)
        #expect(rejected.reason == .certificateRejected && rejected.code == .unauthenticated)
        #expect(rejected.message.contains("probably rejected this client's certificate"), "\(rejected.message)")

        // Nothing points at TLS when the server asked for no certificate, or answered with data.
        var plain = TLSPair(client: try clientContext().makeSession(serverName: "localhost"),
                            server: try serverContext().makeSession())
        try plain.pump()
        #expect(plain.client.likelyCauseOfAbruptEnd == nil)
        var accepted = TLSPair(client: try clientContext(certificate: (certificates.clientCertificate, certificates.clientKey))
                                .makeSession(serverName: "localhost"), server: try server.makeSession())
        try accepted.pump()
        #expect(accepted.client.likelyCauseOfAbruptEnd?.reason == .certificateRejected, "no answer yet")
        try accepted.server.send([5])
        try accepted.pump()
        #expect(accepted.clientReceived == [5] && accepted.client.likelyCauseOfAbruptEnd == nil)
    }

    @Test func optionalClientCertificate() throws {
        let server = try serverContext(clientCA: true, auth: .optional)
        var without = TLSPair(client: try clientContext().makeSession(serverName: "localhost"), server: try server.makeSession())
        try without.pump()
        #expect(without.server.isHandshakeComplete && without.server.peerCertificateSubject == nil)
        var with = TLSPair(client: try clientContext(certificate: (certificates.clientCertificate, certificates.clientKey))
                            .makeSession(serverName: "localhost"), server: try server.makeSession())
        try with.pump()
        #expect(with.server.peerCertificateSubject == TestCertificates.clientSubject)
    }

    @Test func resumptionSkipsTheFullHandshake() throws {
        let server = try serverContext()
        let client = try clientContext()
        var first = TLSPair(client: try client.makeSession(serverName: "localhost"), server: try server.makeSession())
        #expect(!first.client.hasResumptionTicket)
        try first.pump()
        #expect(!first.client.isResumed)
        #expect(first.client.hasResumptionTicket)
        let ticket = try #require(first.client.resumptionTicket)
        var second = TLSPair(client: try client.makeSession(serverName: "localhost", resuming: ticket),
                             server: try server.makeSession())
        try second.pump()
        #expect(second.client.isResumed && second.server.isResumed)
        try second.client.send([9])
        try second.pump()
        #expect(second.serverReceived == [9])
    }

    /// Audit 36 M4: OpenSSL checks nothing of a client certificate when a session resumes, so
    /// a client went on resuming (its ticket renewed each time) after its certificate expired.
    /// A ticket whose certificate has expired costs a full handshake, which refuses it.
    @Test func aTicketWhoseClientCertificateExpiredDoesNotResume() async throws {
        let server = try serverContext(clientCA: true, auth: .require)
        // Long enough to be valid at the first handshake on a busy machine.
        let (certificate, notAfter) = try certificates.makeShortLivedClientCertificate(named: "short", seconds: 20)
        let client = try clientContext(certificate: (certificate, certificates.clientKey))
        var first = TLSPair(client: try client.makeSession(serverName: "localhost"), server: try server.makeSession())
        try first.pump()
        try #require(first.server.isHandshakeComplete, "the certificate was valid then")
        let ticket = try #require(first.client.takeNewResumptionTicket())
        var before = TLSPair(client: try client.makeSession(serverName: "localhost", resuming: ticket),
                             server: try server.makeSession())
        try before.pump()
        if Date() < notAfter { #expect(before.server.isResumed, "resumed while the certificate is valid") }
        // Past its end (certificate times have whole seconds).
        while Date() < notAfter.addingTimeInterval(1.5) { try await Task.sleep(for: .milliseconds(200)) }
        var after = TLSPair(client: try client.makeSession(serverName: "localhost", resuming: ticket),
                            server: try server.makeSession())
        _ = try? after.pump()
        #expect(!after.server.isResumed && !after.server.isHandshakeComplete, "an expired certificate got in again")
    }

    /// The ticket outlives a connection that ended without close_notify (a server's idle
    /// close): freeing such a session makes OpenSSL mark it not resumable, and the ticket
    /// must not share it.
    @Test func aTicketStillResumesAfterItsConnectionEndedUncleanly() throws {
        let server = try serverContext()
        let client = try clientContext()
        let ticket: TLSSessionTicket
        do {
            var first = TLSPair(client: try client.makeSession(serverName: "localhost"), server: try server.makeSession())
            try first.pump()
            ticket = try #require(first.client.takeNewResumptionTicket())
            #expect(first.client.takeNewResumptionTicket() == nil, "no new ticket until the server sends one")
        }  // both sessions freed here, neither shut down
        var second = TLSPair(client: try client.makeSession(serverName: "localhost", resuming: ticket),
                             server: try server.makeSession())
        try second.pump()
        #expect(second.client.isResumed && second.server.isResumed)
    }

    /// A reload (SIGHUP) builds a new context from the old one: tickets issued before it
    /// resume after it; a restart (a context made afresh) or changed client certificate rules
    /// cost a full handshake.
    @Test func ticketsResumeOnTheContextThatReplacedTheirs() throws {
        let client = try clientContext()
        let old = try serverContext()
        var first = TLSPair(client: try client.makeSession(serverName: "localhost"), server: try old.makeSession())
        try first.pump()
        let ticket = try #require(first.client.takeNewResumptionTicket())
        func resumes(on context: TLSServerContext) throws -> Bool {
            var pair = TLSPair(client: try client.makeSession(serverName: "localhost", resuming: ticket),
                               server: try context.makeSession())
            try pair.pump()
            #expect(pair.client.isHandshakeComplete && pair.server.isHandshakeComplete)
            return pair.client.isResumed && pair.server.isResumed
        }
        #expect(try !resumes(on: try serverContext()), "a new context has new ticket keys")
        let stricter = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                            privateKeyFile: certificates.serverKey, clientCAFile: certificates.caCertificate,
                                            replacing: old)
        #expect(try !resumes(on: stricter), "a session made without client certificate checks must not resume under them")
        let reloaded = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                            privateKeyFile: certificates.serverKey, replacing: old)
        #expect(try resumes(on: reloaded))
        let again = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                         privateKeyFile: certificates.serverKey, replacing: reloaded)
        #expect(try resumes(on: again), "the keys carry over every reload")
    }

    @Test func garbageIsNotTLS() throws {
        let session = try serverContext().makeSession()
        var plaintext: [UInt8] = []
        let lean: [UInt8] = [0, 0, 0, 12] + Array("not a hello!".utf8)
        do {
            try session.receive(lean, into: &plaintext)
            Issue.record("cleartext was taken for TLS")
        } catch {
            #expect(error.reason == .notTLS && error.message == "the client did not send a TLS ClientHello")
        }
        // A record header that claims a handshake, then junk.
        let junk: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0x20] + Array(repeating: 0xAB, count: 32)
        let other = try serverContext().makeSession()
        #expect(throws: TLSError.self) { try other.receive(junk, into: &plaintext) }
        #expect(plaintext.isEmpty)
    }

    /// A whole ClientHello, then bytes that are not TLS: the handshake failed after the hello
    /// (the server answered it), which the reason says, rather than "did not send a ClientHello".
    @Test func garbageAfterAValidClientHelloIsAFailedHandshake() throws {
        let client = try clientContext().makeSession(serverName: "localhost")
        try client.startHandshake()
        var hello: [UInt8] = []
        client.takeOutput(into: &hello)
        let session = try serverContext().makeSession()
        var plaintext: [UInt8] = []
        do {
            try session.receive(hello + [UInt8](repeating: 0, count: 8), into: &plaintext)
            Issue.record("garbage after the ClientHello was accepted")
        } catch {
            #expect(error.reason == .handshakeFailed, "\(error)")
            #expect(error.message.contains("after the client's ClientHello"), "\(error)")
        }
    }

    @Test func badFilesAreConfigurationErrors() throws {
        do {
            _ = try TLSServerContext(certificateChainFile: certificates.path("missing.pem"), privateKeyFile: certificates.serverKey)
            Issue.record("a missing certificate file was accepted")
        } catch {
            #expect(error.reason == .configuration && error.code == .failedPrecondition)
            #expect(error.message.contains("missing.pem: no such file or directory"), "\(error.message)")
        }
        do {
            _ = try TLSClientContext(verification: .caFile(certificates.path("no-ca.pem")))
            Issue.record("a missing CA file was accepted")
        } catch {
            #expect(error.message.hasSuffix("no-ca.pem: no such file or directory"), "\(error.message)")
        }
        do {
            // Readable but not PEM: the PEM advice, not a file error.
            _ = try TLSServerContext(certificateChainFile: certificates.serverKey, privateKeyFile: certificates.serverKey)
            Issue.record("a key file given as the certificate was accepted")
        } catch {
            #expect(error.message.contains("it must be readable PEM"), "\(error.message)")
        }
        do {
            _ = try TLSServerContext(certificateChainFile: certificates.clientCertificate, privateKeyFile: certificates.serverKey)
            Issue.record("a key that does not match the certificate was accepted")
        } catch {
            #expect(error.message.contains("does not belong to the certificate"))
        }
        // The CA's certificate first, then the server's: the order is the mistake, and it is named.
        let reversed = certificates.path("reversed.pem")
        try (String(contentsOfFile: certificates.caCertificate, encoding: .utf8)
             + String(contentsOfFile: certificates.serverCertificate, encoding: .utf8))
            .write(toFile: reversed, atomically: true, encoding: .utf8)
        do {
            _ = try TLSServerContext(certificateChainFile: reversed, privateKeyFile: certificates.serverKey)
            Issue.record("a chain file beginning with its CA was accepted")
        } catch {
            #expect(error.message.contains("its first certificate, CN=Larder Test CA, is a CA's; the server's own certificate "
                                           + "must come first"), "\(error)")
        }
        do {
            _ = try TLSServerContext(certificateChainFile: certificates.serverCertificate, privateKeyFile: certificates.serverKey,
                                     clientCAFile: certificates.path("no-client-ca.pem"))
            Issue.record("a missing client CA file was accepted")
        } catch {
            #expect(error.message.hasSuffix("no-client-ca.pem: no such file or directory"), "\(error.message)")
        }
        let encrypted = try certificates.makeEncryptedServerKey(named: "encrypted")
        do {
            // Refused with its reason, never by asking for the passphrase on a terminal (audit 36 M3).
            _ = try TLSServerContext(certificateChainFile: certificates.serverCertificate, privateKeyFile: encrypted)
            Issue.record("an encrypted key was loaded")
        } catch {
            #expect(error.message.contains("is encrypted with a passphrase, which larder cannot ask for"), "\(error.message)")
        }
    }
}
