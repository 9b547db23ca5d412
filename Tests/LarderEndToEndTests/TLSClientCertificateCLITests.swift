import Foundation
import LarderTestSupport
import Testing

/// `larder --tls --cert FILE --key FILE` against a server that requires client certificates
/// (`--tls-client-ca`, `--tls-client-auth require`): refused without one, with a clear message;
/// accepted with the right one, whose subject the access log shows.
@Suite("larder --cert/--key against larder-server --tls-client-auth require", .serialized, .offThePool)
final class TLSClientCertificateCLITests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    @Test func aClientCertificateFromFlagsOrTheEnvironment() async throws {
        let server = try await ServerProcess(arguments: [
            "--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey, "--tls-only",
            "--tls-client-ca", certificates.caCertificate, "--tls-client-auth", "require", "--access-log"])
        defer { server.stop() }
        let verified = ["--tls", "--ca", certificates.caCertificate, "--server-name", "localhost"]

        let missing = try await CLIEndToEndTests.larder(verified + ["locations", "list"], server: server)
        #expect(missing.status == 26, "UNAUTHENTICATED: \(missing.stderr)")
        #expect(missing.stderr.contains("requires a client certificate"), "\(missing.stderr)")

        let listed = try await CLIEndToEndTests.larder(
            verified + ["--cert", certificates.clientCertificate, "--key", certificates.clientKey, "locations", "list"],
            server: server)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count == 5, "header + 4 locations:\n\(listed.stdout)")
        #expect(await server.waitForLog("client_cert=\"\(TestCertificates.clientSubject)\" "
                                        + "method=/larder.v1.LocationService/ListLocations"), "\(server.stderr)")

        // The same from LARDER_CERT and LARDER_KEY, like every other global flag.
        var environment = ProcessInfo.processInfo.environment
        environment["LARDER_SERVER"] = server.address
        environment["LARDER_CERT"] = certificates.clientCertificate
        environment["LARDER_KEY"] = certificates.clientKey
        environment["LARDER_TIMEOUT"] = cliTestTimeout
        let fromEnvironment = try await runBinary("larder", verified + ["health"], environment: environment)
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")

        // A certificate the server's client CA did not sign is refused, and said so however the
        // refusal reaches the client (TLS 1.3: an alert after the client's handshake, which a
        // send may meet first, or a reset that loses it; see TLSClientCertificateRefusalTests).
        let stranger = try await CLIEndToEndTests.larder(
            verified + ["--cert", certificates.strangerCertificate, "--key", certificates.strangerKey, "health"],
            server: server)
        #expect(stranger.status == 26, "UNAUTHENTICATED: \(stranger.stderr)")
        #expect(stranger.stderr.contains("rejected this client's certificate"), "\(stranger.stderr)")
        #expect(await server.waitForLog("the client needs a certificate issued by --tls-client-ca"), "\(server.stderr)")

        // Half a pair is a usage error, before any connection.
        let half = try await CLIEndToEndTests.larder(verified + ["--cert", certificates.clientCertificate, "health"],
                                                     server: server)
        #expect(half.status == 2 && half.stderr.contains("needs both --cert FILE and --key FILE"), "\(half.stderr)")
    }
}
