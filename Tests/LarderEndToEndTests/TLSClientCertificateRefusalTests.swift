import Foundation
import LarderAPI
import LarderClient
import LarderTLS
import LarderTestSupport
import LarderWire
import Testing

/// A TLS 1.3 server refuses a client certificate (or the lack of one) after the client's side of
/// the handshake is done; when its close resets the connection before its alert is read, the
/// client still says that the certificate was the problem, not "connection reset".
@Suite("LarderClient against a server that resets after refusing a client certificate", .serialized, .offThePool)
final class TLSClientCertificateRefusalTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    /// A server requiring client certificates that drops its alert and resets the connection
    /// (more than once: the client connects when made, and again for the call if that
    /// connection already ended).
    func resettingServer() throws -> TLSTestListener {
        let context = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                           privateKeyFile: certificates.serverKey,
                                           clientCAFile: certificates.caCertificate, clientAuthentication: .require,
                                           protocols: ["larder"])
        return try TLSTestListener(context: context, connections: 4) { fd, session in
            if TLSTestListener.run(fd, session, until: { _ in false }) != nil { TLSTestListener.resetOnClose(fd) }
        }
    }

    func callError(_ port: UInt16, certificate: (String, String)?) async throws -> RPCError {
        var options = ClientOptions(defaultTimeout: .seconds(60),
                                    tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost",
                                                   certificateFile: certificate?.0, keyFile: certificate?.1))
        options.connectTimeout = .seconds(60)
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: port), options: options)
        defer { client.close() }
        do {
            _ = try await client.call(HealthMethods.check, HealthCheckRequest())
        } catch {
            return error
        }
        throw SupportError("the call succeeded against a server that refuses every client")
    }

    @Test func noCertificate() async throws {
        let server = try resettingServer()
        defer { server.close() }
        let error = try await callError(server.port, certificate: nil)
        #expect(error.code == .unauthenticated, "\(error)")
        #expect(error.message.contains("probably requires a client certificate"), "\(error.message)")
    }

    @Test func aCertificateFromAnotherCA() async throws {
        let server = try resettingServer()
        defer { server.close() }
        let error = try await callError(server.port, certificate: (certificates.strangerCertificate, certificates.strangerKey))
        #expect(error.code == .unauthenticated, "\(error)")
        #expect(error.message.contains("probably rejected this client's certificate"), "\(error.message)")
    }
}
