import Foundation
import LarderTestSupport
import Testing

/// `larder bench --tls` against a real TLS `larder-server` started with `--tls-only`, so the
/// data the bench creates and deletes goes over TLS too: both protocols, a CA that signed
/// nothing here, and client certificates.
@Suite("larder bench over TLS", .serialized)
final class BenchTLSEndToEndTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    var serverArguments: [String] {
        ["--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey, "--tls-only"]
    }

    /// Runs `larder bench --json` with `arguments`; its exit status, JSON report and stderr.
    func bench(_ arguments: [String], server: ServerProcess) async throws -> (Int32?, [String: Any], String) {
        let run = try BenchEndToEndTests.bench(["--json", "--warmup", "0s"] + arguments, server: server)
        let status = await run.waitForExit()
        let json = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
        return (status, json, run.stderr)
    }

    @Test(arguments: ["lean", "grpc"])
    func getOverTLSSucceedsWithNoErrors(protocol name: String) async throws {
        let server = try await ServerProcess(arguments: serverArguments + ["--log-level", "debug"])
        defer { server.stop() }
        let (status, json, stderr) = try await bench([
            "--tls", "--ca", certificates.caCertificate, "--server-name", "localhost", "--protocol", name,
            "--workload", "get", "--seed-locations", "30", "--requests", "400", "--concurrency", "16", "--connections", "4",
        ], server: server)
        #expect(status == 0, "\(stderr)")
        #expect(json["protocol"] as? String == name)
        #expect(json["calls"] as? Int == 400 && json["errors"] as? Int == 0 && json["lost_calls"] as? Int == 0, "\(json)")
        #expect((json["connection_failures"] as? [String])?.isEmpty == true, "\(json)")
        let tls = json["tls"] as? [String: Any] ?? [:]
        #expect(tls["alpn"] as? String == (name == "grpc" ? "h2" : "larder"), "\(json)")
        #expect(tls["version"] as? String == "TLSv1.3" && tls["handshakes"] as? Int == 4, "\(json)")
        // The 30 locations were created and deleted over TLS (the server refuses cleartext).
        let data = json["data"] as? [String: Any] ?? [:]
        #expect(data["deleted_locations"] as? Int == 30 && data["failure"] is NSNull, "\(json)")
        #expect(await server.waitForLog("alpn=\(name == "grpc" ? "h2" : "larder")"), "\(server.stderr)")
        #expect(!server.stderr.contains("event=cleartext_refused"), "\(server.stderr)")
    }

    @Test func theTextReportSaysTLS() async throws {
        let server = try await ServerProcess(arguments: serverArguments)
        defer { server.stop() }
        let run = try BenchEndToEndTests.bench([
            "--tls", "--ca", certificates.caCertificate, "--requests", "50", "--concurrency", "2", "--warmup", "0s",
        ], server: server)
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        #expect(run.stdout.contains("larder bench: ping against \(server.address) over TLS, 2 connections"), "\(run.stdout)")
        #expect(run.stdout.contains("  tls          TLSv1.3, ALPN larder, 2 handshakes ("), "\(run.stdout)")
    }

    @Test func keptDataIsDeletedByTheCommandTheReportNames() async throws {
        let server = try await ServerProcess(arguments: serverArguments)
        defer { server.stop() }
        let (status, json, stderr) = try await bench([
            "--tls", "--ca", certificates.caCertificate, "--server-name", "localhost", "--workload", "get",
            "--seed-locations", "20", "--requests", "50", "--concurrency", "4", "--keep-data",
        ], server: server)
        #expect(status == 0, "\(stderr)")
        let data = json["data"] as? [String: Any] ?? [:]
        let command = data["clean_up_command"] as? String ?? ""
        #expect(command.hasPrefix("larder bench --server \(server.address) --tls --ca \(certificates.caCertificate) "
                                  + "--server-name localhost --clean-up larder-bench-"), "\(json)")
        // The command works as printed (the server refuses cleartext, so without --tls it would not).
        let words = command.split(separator: " ").map(String.init)
        let cleanUp = try ChildProcess(try ServerProcess.binary("larder"), Array(words.dropFirst()))
        #expect(await cleanUp.waitForExit() == 0, "\(cleanUp.stderr)")
        #expect(cleanUp.stdout.hasPrefix("deleted 20 locations and 0 meal records named larder-bench-"), "\(cleanUp.stdout)")
    }

    @Test(arguments: ["lean", "grpc"])
    func aWrongCAIsAClearErrorNotAHang(protocol name: String) async throws {
        let server = try await ServerProcess(arguments: serverArguments)
        defer { server.stop() }
        for workload in ["ping", "get"] {  // the load's connections; the data's (get seeds first)
            let (status, _, stderr) = try await bench([
                "--tls", "--ca", certificates.otherCACertificate, "--server-name", "localhost", "--protocol", name,
                "--workload", workload, "--requests", "10",
            ], server: server)
            #expect(status == 3, "\(workload): \(stderr)")
            #expect(stderr.contains("TLS handshake with \(server.address) failed: the server's certificate for localhost "
                                    + "is not signed by a trusted CA"), "\(workload): \(stderr)")
            #expect(stderr.contains("pass --ca FILE"), "\(workload): \(stderr)")
        }
        // Cleartext against --tls-only: refused, not hung.
        let (status, _, stderr) = try await bench(["--protocol", name, "--requests", "10"], server: server)
        #expect(status != 0 && status != nil, "\(stderr)")
    }

    @Test func clientCertificatesForTheBench() async throws {
        let server = try await ServerProcess(arguments: serverArguments + [
            "--tls-client-ca", certificates.caCertificate, "--tls-client-auth", "require", "--access-log"])
        defer { server.stop() }
        let common = ["--tls", "--ca", certificates.caCertificate, "--server-name", "localhost", "--requests", "100",
                      "--concurrency", "4", "--connections", "2"]
        for name in ["lean", "grpc"] {
            let (status, json, stderr) = try await bench(common + ["--protocol", name, "--cert", certificates.clientCertificate,
                                                                   "--key", certificates.clientKey], server: server)
            #expect(status == 0 && json["errors"] as? Int == 0, "\(name): \(stderr) \(json)")
        }
        #expect(await server.waitForLog("client_cert=\"\(TestCertificates.clientSubject)\""), "\(server.stderr)")

        // Without one: TLS 1.3 finishes the client's handshake first, so the refusal arrives as an alert on the connection.
        let (status, json, stderr) = try await bench(common, server: server)
        #expect(status != 0 && status != nil, "\(stderr)")
        let said = stderr + "\(json["connection_failures"] ?? "")"
        #expect(said.contains("the server requires a client certificate"), "\(said)")
    }
}
