import Foundation
import LarderAPI
import LarderClient
import LarderTLS
import LarderTestSupport
import LarderWire
import Testing

/// A TLS server that answers a call with close_notify and leaves its TCP connection open: the
/// client takes close_notify as the end of the connection (PROTOCOL.md §1), at once, rather than
/// waiting for a reply that cannot come until the call's deadline (audit 14).
@Suite("LarderClient and a TLS close_notify with TCP left open", .serialized, .offThePool)
final class TLSCloseNotifyClientTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    @Test func aCallEndsUnavailableAtTheServersCloseNotify() async throws {
        let context = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                           privateKeyFile: certificates.serverKey, protocols: ["larder"])
        let server = try TLSTestListener(context: context, connections: 1) { fd, session in
            // The first request frame read: close_notify, then keep TCP open until the client closes.
            _ = TLSTestListener.run(fd, session) { plaintext in plaintext.count >= 4 }
            session.close()
            var output: [UInt8] = []
            session.takeOutput(into: &output)
            _ = output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var byte: UInt8 = 0
            while recv(fd, &byte, 1, 0) > 0 {}
        }
        defer { server.close() }
        var options = ClientOptions(defaultTimeout: .seconds(60),
                                    tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost"))
        options.connectTimeout = .seconds(60)
        let client = try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port), options: options)
        defer { client.close() }
        do {
            _ = try await client.call(HealthMethods.check, HealthCheckRequest())
            Issue.record("a call answered by close_notify succeeded")
        } catch {
            #expect(error.code == .unavailable, "\(error)")
            #expect(error.message.contains("close_notify"), "\(error.message)")
        }
    }
}
