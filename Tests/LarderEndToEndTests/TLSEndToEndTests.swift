import Foundation
import LarderAPI
import LarderClient
import LarderHTTP2
import LarderTestSupport
import LarderWire
import Testing

/// TLS against the real `larder-server`: lean calls over TLS beside cleartext on one port,
/// --tls-only, verification failures as clear client errors, client certificates, hostile
/// handshakes, and SIGHUP reloading the certificate with a call in flight.
@Suite("TLS end to end", .serialized, .offThePool)
final class TLSEndToEndTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    var tlsArguments: [String] {
        ["--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey]
    }

    func tlsClient(_ server: ServerProcess, tls: ClientTLS? = nil, token: String? = nil) throws -> LarderClient {
        var options = ClientOptions(defaultTimeout: .seconds(60),
                                    tls: tls ?? ClientTLS(caFile: certificates.caCertificate, serverName: "localhost"))
        options.connectTimeout = .seconds(60)
        if let token { options.setBearerToken(token) }
        return try LarderClient(server: ServerAddress(host: "127.0.0.1", port: server.port), options: options)
    }

    /// True once a fresh TLS client has been served a health check. On a server with a 1 s
    /// handshake or idle timer, a loaded machine can stall a client past it: a client that
    /// fails is replaced (10 clients at most) only when the server logged a timeout meanwhile.
    /// Any other failure is recorded, and false.
    func aTLSClientIsServed(_ server: ServerProcess) async -> Bool {
        var lastError = ""
        for _ in 0..<10 {
            let timeoutsBefore = Self.timeouts(in: server.stderr)
            do {
                let client = try tlsClient(server)
                defer { client.close() }
                return try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving
            } catch {
                lastError = "\(error)"
                // The log line may come after the client saw its connection end.
                guard await eventually(seconds: 30, { Self.timeouts(in: server.stderr) > timeoutsBefore }) else {
                    Issue.record("a TLS client failed with no timeout logged: \(lastError)")
                    return false
                }
            }
        }
        Issue.record("10 TLS clients in turn were timed out; the last failed with \(lastError)")
        return false
    }

    /// How many connections the server's log says its handshake or idle timer ended.
    static func timeouts(in log: String) -> Int {
        log.split(separator: "\n").count { $0.contains("event=tls_handshake_timeout") || $0.contains("event=idle_timeout") }
    }

    /// The error a client gets from connecting (or its first call), as an RPCError.
    func connectError(_ server: ServerProcess, tls: ClientTLS) async -> RPCError? {
        do {
            let client = try tlsClient(server, tls: tls)
            defer { client.close() }
            _ = try await client.call(LocationMethods.listLocations, ListLocationsRequest())
            return nil
        } catch let error as RPCError {
            return error
        } catch {
            return RPCError(.unknown, "\(error)")
        }
    }

    @Test func leanCallsOverTLSBesideCleartextOnOnePort() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--log-level", "debug", "--access-log"])
        defer { server.stop() }
        let secure = try tlsClient(server)
        let clear = try LarderClient.loopback(port: server.port)
        defer {
            secure.close()
            clear.close()
        }
        let created = try await secure.call(LocationMethods.createLocation,
                                            CreateLocationRequest(location: Location(name: "Over TLS", colorHex: "#102030")))
        // Many calls in flight on the TLS connection, interleaved with cleartext ones.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                let client = index % 2 == 0 ? secure : clear
                group.addTask { try await client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count }
            }
            for try await count in group { #expect(count == 5) }
        }
        #expect(try await clear.call(LocationMethods.getLocation, GetLocationRequest(id: created.id)).name == "Over TLS")
        #expect(await server.waitForLog("event=tls_established"))
        let established = server.stderr.split(separator: "\n").first { $0.contains("event=tls_established") }
        #expect(established?.contains("version=TLSv1.3 alpn=larder resumed=false client_cert=none") == true,
                "\(established ?? "")")
        // The same port still answers a TLS client that does not verify (with a warning in the CLI, not here).
        let unverified = try tlsClient(server, tls: ClientTLS(insecureSkipVerify: true))
        defer { unverified.close() }
        #expect(try await unverified.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        #expect(server.stop() == 0)
    }

    @Test func verificationFailuresAreClearClientErrors() async throws {
        let server = try await ServerProcess(arguments: tlsArguments)
        defer { server.stop() }
        let wrongCA = await connectError(server, tls: ClientTLS(caFile: certificates.otherCACertificate, serverName: "localhost"))
        #expect(wrongCA?.code == .unavailable)
        #expect(wrongCA?.message.hasPrefix("TLS handshake with 127.0.0.1:\(server.port) failed: the server's certificate "
                                           + "for localhost is not signed by a trusted CA") == true, "\(String(describing: wrongCA))")
        #expect(wrongCA?.message.contains("pass --ca FILE") == true)

        let wrongName = await connectError(server, tls: ClientTLS(caFile: certificates.caCertificate,
                                                                  serverName: "larder.example.com"))
        #expect(wrongName?.message.contains("is not valid for \"larder.example.com\"") == true, "\(String(describing: wrongName))")
        #expect(wrongName?.message.contains("--server-name NAME") == true)

        // By address: the certificate lists 127.0.0.1, so no --server-name is needed.
        let byAddress = try tlsClient(server, tls: ClientTLS(caFile: certificates.caCertificate))
        defer { byAddress.close() }
        #expect(try await byAddress.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        #expect(await server.waitForLog("event=tls_handshake_failed"), "the server logs the refused handshakes")
    }

    @Test func expiredServerCertificateIsRefused() async throws {
        let server = try await ServerProcess(arguments: ["--tls-cert", certificates.expiredServerCertificate,
                                                         "--tls-key", certificates.serverKey])
        defer { server.stop() }
        let error = await connectError(server, tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost"))
        #expect(error?.message.contains("the server's certificate for localhost has expired") == true,
                "\(String(describing: error))")
        // The operator is told at start, not only by clients failing.
        let line = server.stderr.split(separator: "\n").first { $0.contains("event=tls_certificate ") }
        #expect(line?.contains("level=warn") == true && line?.contains("state=expired") == true
                    && line?.contains("days_left=-1") == true && line?.contains("CN=localhost") == true,
                "\(server.stderr)")
    }

    @Test func tlsOnlyRefusesCleartextWithAClearError() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--tls-only"])
        defer { server.stop() }
        let clear = try LarderClient.loopback(port: server.port)
        defer { clear.close() }
        let refused = await expectStatus(.unavailable) { try await clear.call(HealthMethods.check, HealthCheckRequest()) }
        #expect(refused?.message.contains("accepts TLS connections only (--tls-only)") == true, "\(String(describing: refused))")
        let secure = try tlsClient(server)
        defer { secure.close() }
        #expect(try await secure.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        #expect(await server.waitForLog("event=cleartext_refused"))
    }

    /// An h2c client (gRPC without TLS credentials) reaching a --tls-only server gets the refusal
    /// over HTTP/2, not a lean frame its HTTP/2 parser would report as a malformed frame: its call
    /// is answered UNAVAILABLE with the text, and a peer that makes no call gets the server's
    /// SETTINGS, then (at the handshake timeout) a GOAWAY INADEQUATE_SECURITY carrying the text.
    @Test func tlsOnlyRefusesAnH2cClientOverHTTP2() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--tls-only", "--tls-handshake-timeout", "5"])
        defer { server.stop() }
        let port = server.port
        let frames = try await offThePool { () throws -> [(type: UInt8, payload: [UInt8])] in
            let peer = try RawConnection(port: port)
            peer.send(HTTP2Preface.bytes + [0, 0, 0, 0x04, 0, 0, 0, 0, 0])  // the preface, an empty SETTINGS
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { peer.receiveSome(into: $0, within: 120) }  // to the server's close
                guard count > 0 else { break }
                received += buffer[0..<count]
            }
            var frames: [(type: UInt8, payload: [UInt8])] = []
            var offset = 0
            while received.count - offset >= 9 {
                let length = Int(received[offset]) << 16 | Int(received[offset + 1]) << 8 | Int(received[offset + 2])
                guard received.count - offset - 9 >= length else { break }
                frames.append((received[offset + 3], Array(received[(offset + 9)..<(offset + 9 + length)])))
                offset += 9 + length
            }
            return frames
        }
        #expect(frames.first?.type == 0x4, "the server's SETTINGS first: \(frames.map(\.type))")
        let goaway = frames.first { $0.type == 0x7 }
        #expect(goaway.map { Array($0.payload[4..<8]) } == [0, 0, 0, 0x0C], "INADEQUATE_SECURITY")
        let text = goaway.map { String(decoding: $0.payload.dropFirst(8), as: UTF8.self) }
        #expect(text?.contains("accepts TLS connections only (--tls-only)") == true, "\(frames.map(\.type)) \(text ?? "")")
        #expect(await server.waitForLog("event=cleartext_refused"))

        let client = try HTTP2TestClient(port: port)
        let answered = try await offThePool { () throws -> GRPCClientSession.Response? in
            let stream = try client.start("/grpc.health.v1.Health/Check", messages: [[]])
            return client.read(stream) { $0.ended }
        }
        let trailers = answered?.trailers ?? [:]
        #expect(trailers["grpc-status"] == "\(StatusCode.unavailable.rawValue)", "\(trailers)")
        #expect(trailers["grpc-message"]?.contains("accepts TLS connections only (--tls-only)") == true, "\(trailers)")
    }

    @Test func clientCertificatesRequiredAndReportedInTheAccessLog() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + [
            "--tls-client-ca", certificates.caCertificate, "--tls-client-auth", "require", "--access-log"])
        defer { server.stop() }
        let withCertificate = try tlsClient(server, tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost",
                                                                   certificateFile: certificates.clientCertificate,
                                                                   keyFile: certificates.clientKey))
        defer { withCertificate.close() }
        #expect(try await withCertificate.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 4)
        #expect(await server.waitForLog("client_cert=\"CN=larder-test-client,O=Larder Tests\" method=/larder.v1.LocationService/ListLocations"),
                "\(server.stderr)")

        let without = await connectError(server, tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost"))
        #expect(without?.code == .unauthenticated, "\(String(describing: without))")
        #expect(without?.message.contains("the server requires a client certificate") == true)
        #expect(await server.waitForLog("the client sent no certificate"))

        let stranger = await connectError(server, tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost",
                                                                 certificateFile: certificates.strangerCertificate,
                                                                 keyFile: certificates.strangerKey))
        #expect(stranger?.code == .unauthenticated, "\(String(describing: stranger))")
        #expect(stranger?.message.contains("the server rejected this client's certificate") == true)

        // Without --tls-only, a cleartext client gets health only: skipping TLS skipped the
        // certificate check, and it was served everything (audit 20 F1).
        let clear = try LarderClient.loopback(port: server.port)
        defer { clear.close() }
        #expect(try await clear.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        let refused = await expectStatus(.unauthenticated) {
            try await clear.call(LocationMethods.listLocations, ListLocationsRequest())
        }
        #expect(refused?.message.contains("over TLS only (--tls-client-auth require)") == true,
                "\(String(describing: refused))")
        #expect(server.stderr.contains("cleartext=\"health only (--tls-client-auth require)\""), "\(server.stderr)")
    }

    /// A TLS client speaks first, so on a --tls-only server a connection that sends nothing has
    /// its handshake timeout run from the accept (before, it held a slot for --idle-timeout).
    @Test func aSilentConnectionToATLSOnlyServerEndsAtTheHandshakeTimeout() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--tls-only", "--tls-handshake-timeout", "1"])
        defer { server.stop() }
        let silent = try RawConnection(port: server.port)
        let closed = await offThePool { silent.isClosedByServer() }
        #expect(closed)
        #expect(await server.waitForLog("event=tls_handshake_timeout"), "\(server.stderr)")
        #expect(await aTLSClientIsServed(server))
    }

    @Test func garbageAndStalledHandshakesCloseOnlyThatConnection() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--tls-handshake-timeout", "5"])
        defer { server.stop() }
        let secure = try tlsClient(server)
        defer { secure.close() }
        _ = try await secure.call(HealthMethods.check, HealthCheckRequest())

        // A record header that announces a handshake, then junk.
        let garbage = try RawConnection(port: server.port)
        garbage.send([0x16, 0x03, 0x01, 0x00, 0x40] + Array(repeating: 0xA5, count: 64))
        let garbageClosed = await offThePool { garbage.isClosedByServer() }
        #expect(garbageClosed)
        #expect(await server.waitForLog("event=tls_handshake_failed"))

        // The first bytes of a ClientHello, then silence.
        let stalled = try RawConnection(port: server.port)
        stalled.send([0x16, 0x03, 0x01, 0x02])
        #expect(await server.waitForLog("event=tls_handshake_timeout"), "\(server.stderr)")
        let stalledClosed = await offThePool { stalled.isClosedByServer() }
        #expect(stalledClosed)

        // The established client was never disturbed.
        #expect(try await secure.call(LocationMethods.listLocations, ListLocationsRequest()).locations.count == 4)
        #expect(server.stop() == 0)
    }

    /// The idle timeout can fire before the handshake timeout: its error frame cannot be sent
    /// before the handshake, so it is dropped and the connection closed.
    @Test func anIdleTimeoutDuringTheHandshakeClosesTheConnection() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--idle-timeout", "1", "--tls-handshake-timeout", "600",
                                                                        "--log-level", "debug"])
        defer { server.stop() }
        let stalled = try RawConnection(port: server.port)
        stalled.send([0x16, 0x03, 0x01])
        #expect(await server.waitForLog("event=idle_timeout"), "\(server.stderr)")
        let stalledClosed = await offThePool { stalled.isClosedByServer() }
        #expect(stalledClosed)
        #expect(await aTLSClientIsServed(server))
    }

    @Test func sighupReloadsTheCertificateWithACallInFlight() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-tls-reload")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("server.pem").path
        try FileManager.default.copyItem(atPath: certificates.serverCertificate, toPath: certificate)
        let server = try await ServerProcess(arguments: ["--tls-cert", certificate, "--tls-key", certificates.serverKey,
                                                         "--drain-timeout", "120", "--busy-timeout", "300"])
        defer { server.stop() }
        let before = try tlsClient(server)
        defer { before.close() }
        _ = try await before.call(LocationMethods.listLocations, ListLocationsRequest())

        // A write on the TLS connection, held in flight by a lock on the database.
        let lock = try SQLiteLock(path: server.databasePath)
        let write = Task(executorPreference: BlockingWorkExecutor.shared) {
            try await before.call(LocationMethods.createLocation,
                                  CreateLocationRequest(location: Location(name: "Across the reload", colorHex: "#010203")),
                                  timeout: .seconds(300))
        }
        #expect(try await eventually { try await before.call(AdminMethods.getMetrics, GetMetricsRequest()).callsInFlight >= 2 })

        // The renewed certificate comes from another CA: only clients trusting it accept it.
        let renewed = try certificates.makeServerCertificateFromOtherCA(named: "renewed")
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: renewed, toPath: certificate)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("event=tls_reloaded"), "\(server.stderr)")
        // Each load says how long its certificate is valid: 2 days (1 once a second has
        // passed since it was made), so it expires soon. Logged before tls_reloaded, so it is in.
        let validity = server.stderr.split(separator: "\n").filter { $0.contains("event=tls_certificate ") }
        #expect(validity.count == 2 && validity.allSatisfy {
            $0.contains("level=warn") && $0.contains("state=expiring_soon")
                && ($0.contains("days_left=1") || $0.contains("days_left=2"))
        }, "\(server.stderr)")
        // The certificate was reloaded: no line says SIGHUP changed nothing (no --auth-token-file here).
        #expect(!server.stderr.contains("event=reload_skipped"), "\(server.stderr)")
        let afterOldCA = await connectError(server, tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost"))
        #expect(afterOldCA?.message.contains("not signed by a trusted CA") == true, "new connections get the new certificate")
        let after = try tlsClient(server, tls: ClientTLS(caFile: certificates.otherCACertificate, serverName: "localhost"))
        defer { after.close() }
        _ = try await after.call(LocationMethods.listLocations, ListLocationsRequest())
        // The connection made before the reload still works, and its call in flight finishes.
        _ = try await before.call(LocationMethods.listLocations, ListLocationsRequest())
        lock.release()
        #expect(try await write.value.name == "Across the reload")

        // A bad file: logged, and the certificate in force stays.
        try "not a certificate\n".write(toFile: certificate, atomically: true, encoding: .utf8)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("event=tls_reload_failed"), "\(server.stderr)")
        let failure = server.stderr.split(separator: "\n").first { $0.contains("event=tls_reload_failed") }
        #expect(failure?.contains("level=error") == true && failure?.contains("kept=\"previous certificate\"") == true)
        let stillNew = try tlsClient(server, tls: ClientTLS(caFile: certificates.otherCACertificate, serverName: "localhost"))
        defer { stillNew.close() }
        #expect(try await stillNew.call(HealthMethods.check, HealthCheckRequest()).status == .serving)

        // An expired certificate does not replace one in its validity period (audit 36 L2).
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: certificates.expiredServerCertificate, toPath: certificate)
        kill(server.processIdentifier, SIGHUP)
        #expect(await eventually { server.stderr.components(separatedBy: "event=tls_reload_failed").count == 3 },
                "\(server.stderr)")
        let expired = server.stderr.split(separator: "\n").last { $0.contains("event=tls_reload_failed") }
        #expect(expired?.contains("the new certificate (CN=localhost) expired at") == true
                && expired?.contains("kept=\"previous certificate\"") == true, "\(String(describing: expired))")
        let stillValid = try tlsClient(server, tls: ClientTLS(caFile: certificates.otherCACertificate, serverName: "localhost"))
        defer { stillValid.close() }
        #expect(try await stillValid.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        #expect(server.stop() == 0)
    }

    @Test func theCLIOverTLS() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--tls-only"])
        defer { server.stop() }
        let listed = try await CLIEndToEndTests.larder(["--tls", "--ca", certificates.caCertificate, "locations", "list"],
                                                      server: server)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count == 5, "header + 4 locations:\n\(listed.stdout)")

        let untrusted = try await CLIEndToEndTests.larder(["--tls", "--ca", certificates.otherCACertificate,
                                                           "--server-name", "localhost", "health"], server: server)
        #expect(untrusted.status == 24, "UNAVAILABLE: \(untrusted.stderr)")
        #expect(untrusted.stderr.contains("is not signed by a trusted CA") && untrusted.stderr.contains("--ca FILE"))

        let skipping = try await CLIEndToEndTests.larder(["--tls", "--insecure-skip-verify", "health"], server: server)
        #expect(skipping.status == 0, "\(skipping.stderr)")
        #expect(skipping.stderr.hasPrefix("warning: --insecure-skip-verify"))

        let cleartext = try await CLIEndToEndTests.larder(["health"], server: server)
        #expect(cleartext.status == 24 && cleartext.stderr.contains("accepts TLS connections only"), "\(cleartext.stderr)")
    }

    @Test func aReconnectResumesTheTLSSession() async throws {
        let server = try await ServerProcess(arguments: tlsArguments + ["--log-level", "debug", "--idle-timeout", "1"])
        defer { server.stop() }
        let client = try tlsClient(server)
        defer { client.close() }
        _ = try await client.call(HealthMethods.check, HealthCheckRequest())
        #expect(await server.waitForLog("event=idle_timeout"), "the server closes the idle connection")
        // The next call reconnects, offering the session the server sent on the first connection.
        #expect(await eventually { (try? await client.call(HealthMethods.check, HealthCheckRequest())) != nil })
        #expect(await server.waitForLog("resumed=true"), "\(server.stderr)")
    }

    /// SIGHUP keeps the session ticket keys: a ticket issued before a reload (here with a renewed
    /// certificate from the same CA) resumes after it.
    @Test func aTicketFromBeforeASIGHUPResumesAfterIt() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-tls-ticket-reload")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("server.pem").path
        try FileManager.default.copyItem(atPath: certificates.serverCertificate, toPath: certificate)
        let server = try await ServerProcess(arguments: ["--tls-cert", certificate, "--tls-key", certificates.serverKey,
                                                         "--log-level", "debug", "--idle-timeout", "1"])
        defer { server.stop() }
        let client = try tlsClient(server)
        defer { client.close() }
        _ = try await client.call(HealthMethods.check, HealthCheckRequest())
        #expect(await server.waitForLog("event=idle_timeout"), "the server closes the idle connection")
        // Closed before the reload, so the call after it makes a new connection (a client stalled
        // past the idle timeout before its first call reconnected for it, and that one must end too).
        #expect(await eventually(seconds: 120) { !client.isConnected })

        let renewed = try certificates.makeRenewedServerCertificate(named: "renewed")
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: renewed, toPath: certificate)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("event=tls_reloaded"), "\(server.stderr)")
        // The next call reconnects, offering the ticket the server sent before the reload.
        #expect(await eventually { (try? await client.call(HealthMethods.check, HealthCheckRequest())) != nil })
        let establishedAfterReload = { [server] () -> [Substring] in
            let lines = server.stderr.split(separator: "\n")
            guard let reload = lines.firstIndex(where: { $0.contains("event=tls_reloaded") }) else { return [] }
            return lines[(reload + 1)...].filter { $0.contains("event=tls_established") }
        }
        #expect(await eventually(seconds: 120) { !establishedAfterReload().isEmpty }, "\(server.stderr)")
        let established = establishedAfterReload()
        #expect(!established.isEmpty && established.allSatisfy { $0.contains("resumed=true") },
                "every connection after the reload resumed: \(established)")
    }

    /// A token file (or TLS key) others can read is named in a warning at start (audit 20 F7);
    /// mode 0600 is not.
    @Test func aTokenFileEveryUserCanReadIsWarnedAbout() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-token-mode")
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = try writeTokenFile("t0ken-of-mode-600", in: directory)
        let quiet = try await ServerProcess(arguments: ["--auth-token-file", token])
        #expect(quiet.stop() == 0)
        #expect(!quiet.stderr.contains("secret_file_exposed"), "\(quiet.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: token)
        let exposed = try await ServerProcess(arguments: ["--auth-token-file", token])
        defer { exposed.stop() }
        #expect(await exposed.waitForLog("event=secret_file_exposed path=\(token) file=\"auth token file\" "
                                         + "problem=\"has mode 644: every user can read it\""), "\(exposed.stderr)")
    }

    /// A token short enough to guess is served, with a warning naming the fix; a long one is not warned about.
    @Test func aShortTokenIsWarnedAbout() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-token-short")
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = try writeTokenFile("0123456789abcdef", in: directory)
        let server = try await ServerProcess(arguments: ["--auth-token-file", token])
        defer { server.stop() }
        _ = try writeTokenFile("0123456789abcdef\nshort", in: directory)
        kill(server.processIdentifier, SIGHUP)
        #expect(await server.waitForLog("event=token_short path=\(token) bytes=5 "), "\(server.stderr)")
        let warnings = server.stderr.split(separator: "\n").filter { $0.contains("event=token_short") }
        #expect(warnings.count == 1, "\(server.stderr)")
        #expect(warnings.first?.contains("level=warn event=token_short path=\(token) bytes=5 ") == true, "\(server.stderr)")
        let client = try LarderClient.loopback(port: server.port, token: "short")
        defer { client.close() }
        #expect(try await !client.call(LocationMethods.listLocations, ListLocationsRequest()).locations.isEmpty)
    }

    @Test func nonLoopbackNeedsTLSAndAToken() async throws {
        let directory = try makeTemporaryDirectory(prefix: "larder-tls-listen")
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = try writeTokenFile("t0ken", in: directory)
        let (status, log) = try await ServerProcess.runToExit(
            ["--listen", "0.0.0.0:0", "--db", directory.appendingPathComponent("db.sqlite").path, "--auth-token-file", token])
        #expect(status != 0)
        #expect(log.contains("without TLS (--tls-cert, --tls-key)") && log.contains("--insecure"), "\(log)")
    }
}
