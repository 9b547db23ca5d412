import Foundation
import LarderTLS
import LarderTestSupport
import Testing
import LarderSystem

/// `larder bench --tls` against a real TLS `larder-server` started with `--tls-only`, so the
/// data the bench creates and deletes goes over TLS too: both protocols, a CA that signed
/// nothing here, and client certificates.
@Suite("larder bench over TLS", .serialized, .offThePool)
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

    /// gRPC's PROTOCOL-HTTP2.md: `:scheme` is `https` over TLS. larder-server does not look at
    /// it, so a TLS server of the test's own reads the bench's first request head.
    @Test func grpcOverTLSSaysSchemeHTTPS() async throws {
        let context = try TLSServerContext(certificateChainFile: certificates.serverCertificate,
                                           privateKeyFile: certificates.serverKey, protocols: ["h2"])
        let seen = LockedValue<[UInt8]?>(nil)
        let listener = try TLSTestListener(context: context, connections: 1) { fd, session in
            _ = TLSTestListener.run(fd, session) { plaintext in
                guard let block = Self.firstHeaderBlock(plaintext) else { return false }
                seen.withLock { $0 = block }
                return true
            }
        }
        defer { listener.close() }
        let run = try ChildProcess(try ServerProcess.binary("larder"), [
            "bench", "--server", "127.0.0.1:\(listener.port)", "--tls", "--ca", certificates.caCertificate,
            "--server-name", "localhost", "--protocol", "grpc", "--requests", "1", "--connections", "1",
            "--concurrency", "1", "--warmup", "0s"])
        _ = await run.waitForExit()
        let block = try #require(seen.withLock { $0 }, "no request head reached the test server: \(run.stderr)")
        // HPACK static table: 0x83 is `:method POST`, 0x87 `:scheme https` (0x86 would be `http`).
        #expect(Array(block.prefix(2)) == [0x83, 0x87], "\(block.prefix(8).map { String($0, radix: 16) })")
    }

    /// The header block of the first HEADERS frame after the HTTP/2 preface; nil until it is all there.
    static func firstHeaderBlock(_ plaintext: [UInt8]) -> [UInt8]? {
        var offset = 24  // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        while plaintext.count >= offset + 9 {
            let length = Int(plaintext[offset]) << 16 | Int(plaintext[offset + 1]) << 8 | Int(plaintext[offset + 2])
            let type = plaintext[offset + 3], flags = plaintext[offset + 4]
            guard plaintext.count >= offset + 9 + length else { return nil }
            if type == 0x1 {
                var block = Array(plaintext[(offset + 9)..<(offset + 9 + length)])
                if flags & 0x08 != 0, let padding = block.first { block = Array(block.dropFirst().dropLast(Int(padding))) }
                if flags & 0x20 != 0 { block = Array(block.dropFirst(5)) }
                return block
            }
            offset += 9 + length
        }
        return nil
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
            #expect(status == 4, "\(workload): \(stderr)")
            #expect(stderr.contains("TLS handshake with \(server.address) failed: the server's certificate for localhost "
                                    + "is not signed by a trusted CA"), "\(workload): \(stderr)")
            #expect(stderr.contains("pass --ca FILE"), "\(workload): \(stderr)")
        }
        // Cleartext against --tls-only: refused, not hung; the run never started (exit 4, not 1).
        for workload in ["ping", "get"] {
            let (status, _, stderr) = try await bench(["--protocol", name, "--workload", workload, "--requests", "10"],
                                                      server: server)
            #expect(status == 4, "\(workload): \(stderr)")
            // The server's reason reaches the user over HTTP/2 too (GOAWAY debug data; audit 14).
            #expect(stderr.contains("accepts TLS connections only"), "\(workload): \(stderr)")
        }
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

    @Test("larder --timeout before bench bounds its TLS handshakes; the error names the timeout")
    func connectTimeoutBoundsTheHandshake() async throws {
        // Listening, so the kernel completes the TCP handshake, but nobody answers the TLS one.
        let silent = try boundLoopbackSocket(listening: 16)
        defer { close(silent.fd) }
        let run = try ChildProcess(try ServerProcess.binary("larder"), [
            "--timeout", "1500ms", "bench", "--server", "127.0.0.1:\(silent.port)", "--tls", "--insecure-skip-verify",
            "--requests", "1",
        ])
        #expect(await run.waitForExit() == 4, "\(run.stderr)")
        #expect(run.stderr.contains("did not complete within the connect timeout (1.50s, --connect-timeout;"),
                "\(run.stderr)")
    }

    @Test("a timed run against a listener that never answers says no call was answered, and fails")
    func silentServerIsNamed() async throws {
        let silent = try boundLoopbackSocket(listening: 16)
        defer { close(silent.fd) }
        let run = try ChildProcess(try ServerProcess.binary("larder"), [
            "bench", "--server", "127.0.0.1:\(silent.port)", "--workload", "ping", "--duration", "300ms", "--warmup", "0s",
        ])
        #expect(await run.waitForExit() == 1, "\(run.stderr)")
        #expect(run.stderr.contains("no call was answered during the run") && run.stderr.contains("not a Larder server"),
                "\(run.stderr)")
    }
}
