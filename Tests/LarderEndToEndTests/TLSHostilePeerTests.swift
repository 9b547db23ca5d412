import Foundation
import LarderAPI
import LarderClient
import LarderSystem
import LarderTestSupport
import LarderTLS
import LarderWire
import Testing

/// The boundary between TLS records and the transports, from a peer that controls every
/// byte: frames split across records at every size, a frame over the limit inside TLS, a
/// corrupted record, the HTTP/2 preface inside TLS. Each ends only its own connection.
@Suite("TLS hostile peers", .serialized, .offThePool)
final class TLSHostilePeerTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.make()
    }

    deinit { certificates.remove() }

    /// A TLS client over a raw blocking socket: the test decides what goes into each record.
    final class TLSPeer: @unchecked Sendable {  // used from one task at a time
        let raw: RawConnection
        let session: TLSSession
        private var plaintext: [UInt8] = []
        private var decoder = FrameDecoder(maxFrameSize: 64 * 1024 * 1024)

        init(port: UInt16, ca: String) throws {
            raw = try RawConnection(port: port)
            session = try TLSClientContext(verification: .caFile(ca), protocols: ["larder"])
                .makeSession(serverName: "localhost")
            try session.startHandshake()
            while !session.isHandshakeComplete {
                flushHandshake()
                guard let bytes = readSome() else { throw SupportError("the server closed during the handshake") }
                _ = try session.receive(bytes, into: &plaintext)
            }
            flushHandshake()
        }

        private func flushHandshake() {
            var out: [UInt8] = []
            session.takeOutput(into: &out)
            if !out.isEmpty { raw.send(out) }
        }

        /// Bytes from the socket, nil at end of stream or after 60 s of silence.
        func readSome() -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { raw.receiveSome(into: $0, within: 60) }
            return count > 0 ? Array(buffer[0..<count]) : nil
        }

        /// Encrypts `bytes` as one write (OpenSSL cuts records of up to 16 KiB) and returns the ciphertext.
        /// Sends `bytes` sealed, then close_notify, in one write: the peer's last words.
        func sendThenCloseNotify(_ bytes: [UInt8]) throws {
            var out = try seal(bytes)
            session.close()
            session.takeOutput(into: &out)
            raw.send(out)
        }

        func seal(_ bytes: [UInt8]) throws -> [UInt8] {
            try session.send(bytes)
            var out: [UInt8] = []
            session.takeOutput(into: &out)
            return out
        }

        /// Reads until the server ends the connection (or a TLS error, or the receive timeout);
        /// true when it sent close_notify first.
        func readToEndSawCloseNotify() -> Bool {
            while !session.peerClosed, let bytes = readSome() {
                guard (try? session.receive(bytes, into: &plaintext)) != nil else { return false }
            }
            return session.peerClosed
        }

        /// The next reply, nil when the connection ends first (or a TLS error).
        func receive() -> ResponseEnvelope? {
            while true {
                if let body = try? decoder.next() { return try? ProtoCodec.decode(ResponseEnvelope.self, from: body) }
                guard let bytes = readSome() else { return nil }
                plaintext.removeAll()
                guard (try? session.receive(bytes, into: &plaintext)) != nil else { return nil }
                decoder.append(plaintext)
            }
        }
    }

    /// Peers that stall mid-handshake each hold a TLS session in the server (about 45 KiB,
    /// LIMITS.md "Memory"); once most of them are gone the server gives that memory back to
    /// the system, so its resident size falls (malloc alone would keep the freed pages).
    @Test func memoryOfStalledHandshakesIsGivenBackWhenTheyLeave() async throws {
        let peerCount = 1500
        try #require(Self.raiseDescriptorLimit(to: rlim_t(peerCount * 2 + 500)),
                     "this test needs \(peerCount * 2 + 500) file descriptors (ulimit -n)")
        let server = try await tlsServer("--tls-handshake-timeout", "600", "--tls-max-handshakes", "\(peerCount)")  // all hold a session
        defer { server.stop() }
        let pid = server.processIdentifier
        let before = LimitsEndToEndTests.residentKilobytes(pid: pid)
        // Each peer sends its ClientHello, reads the server's first flight (so the server holds
        // its session), and never finishes.
        var peers = try await stalledHandshakes(peerCount, port: server.port)
        let peak = LimitsEndToEndTests.residentKilobytes(pid: pid)
        #expect(peak - before > peerCount * 16, "each stalled handshake holds a session: \(before) → \(peak) KiB")
        peers.removeAll()
        #expect(await eventually { Self.openDescriptors(pid) < 100 })
        let bound = before + (peak - before) / 3
        #expect(await eventually { LimitsEndToEndTests.residentKilobytes(pid: pid) < bound },
                "RSS \(LimitsEndToEndTests.residentKilobytes(pid: pid)) KiB after the peers left; \(before) before, \(peak) with them")
    }

    /// A ClientHello for this suite's server (the first flight of a client handshake).
    func clientHello() throws -> [UInt8] {
        let session = try TLSClientContext(verification: .caFile(certificates.caCertificate), protocols: ["larder"])
            .makeSession(serverName: "localhost")
        try session.startHandshake()
        var output: [UInt8] = []
        session.takeOutput(into: &output)
        return output
    }

    /// Reads the first bytes of the server's answer to a ClientHello; 0 or less when none came
    /// within `seconds` (10: one receive timeout, for a check that none comes).
    @Sendable static func readFirstFlight(_ peer: RawConnection, within seconds: Double = 120) -> Int {
        var flight = [UInt8](repeating: 0, count: 16 * 1024)
        return flight.withUnsafeMutableBytes { peer.receiveSome(into: $0, within: seconds) }
    }

    /// `count` peers that each send a ClientHello, read the server's first flight (so the server
    /// holds a session and a handshake slot for each), and never finish, in the order they started.
    func stalledHandshakes(_ count: Int, port: UInt16) async throws -> [RawConnection] {
        let hello = try clientHello()
        return try await offThePool {
            try (0..<count).map { index in
                let peer = try RawConnection(port: port)
                peer.send(hello)
                guard Self.readFirstFlight(peer) > 0 else { throw SupportError("peer \(index): no ServerHello (errno \(errno))") }
                return peer
            }
        }
    }

    /// Audit 36 L3: TLS 1.2 is served with ECDHE and AEAD suites only; a client that offers
    /// only CBC with SHA-1, or no ECDHE, is refused at the handshake.
    @Test(arguments: [("ECDHE-ECDSA-AES128-GCM-SHA256", true), ("ECDHE-ECDSA-CHACHA20-POLY1305", true),
                      ("ECDHE-ECDSA-AES128-SHA", false), ("ECDHE-ECDSA-AES256-SHA384", false), ("AES128-GCM-SHA256", false)])
    func tls12TakesForwardSecretAEADSuitesOnly(cipher: String, accepted: Bool) async throws {
        let server = try await tlsServer()
        defer { server.stop() }
        let client = try ChildProcess(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "s_client", "-connect", server.address, "-tls1_2", "-cipher", cipher, "-servername", "localhost",
        ])
        #expect(await client.waitForExit(seconds: 120) != nil)
        let negotiated = client.stdout.contains("Cipher is \(cipher)")
        #expect(negotiated == accepted, "\(cipher): \(client.stdout.suffix(600)) \(client.stderr.suffix(600))")
    }

    /// A server with this suite's certificate and key, and `arguments`.
    func tlsServer(_ arguments: String...) async throws -> ServerProcess {
        try await ServerProcess(arguments: ["--tls-cert", certificates.serverCertificate,
                                            "--tls-key", certificates.serverKey] + arguments)
    }

    /// A `LarderClient` over TLS to this suite's server on `port`, with a minute for each call and connect.
    func tlsClient(port: UInt16) throws -> LarderClient {
        var options = ClientOptions(defaultTimeout: .seconds(60),
                                    tls: ClientTLS(caFile: certificates.caCertificate, serverName: "localhost"))
        options.connectTimeout = .seconds(60)
        return try LarderClient(server: ServerAddress(host: "127.0.0.1", port: port), options: options)
    }

    /// `--tls-max-handshakes 2` without eviction: two peers that stall after the server's first
    /// flight hold both slots; a third TLS connection is not read (no ServerHello) until one
    /// leaves, then gets its handshake; a real client gets its call answered once a slot is free.
    @Test func handshakesBeyondTheCapWaitForASlot() async throws {
        let server = try await tlsServer("--tls-max-handshakes", "2", "--tls-handshake-timeout", "600",
                                         "--tls-evict-handshakes-after", "0")
        defer { server.stop() }
        let port = server.port
        var holders = try await stalledHandshakes(2, port: port)
        let waiting = try RawConnection(port: port)
        waiting.send(try clientHello())
        #expect(await server.waitForLog("event=tls_handshakes_full"), "\(server.stderr)")
        let whileFull = await offThePool { Self.readFirstFlight(waiting, within: 10) }
        #expect(whileFull <= 0, "a third handshake was served while both slots were taken")

        holders.removeFirst()  // closes: its slot is free
        let afterSlot = await offThePool { Self.readFirstFlight(waiting) }
        #expect(afterSlot > 0, "the waiting handshake got the freed slot")

        holders.removeAll()  // one slot free again (the waiting peer holds the other)
        let client = try tlsClient(port: port)
        defer { client.close() }
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        _ = waiting
    }

    /// With every slot held by handshakes stalled past `--tls-evict-handshakes-after` (1 s), a new
    /// TLS client takes the oldest one's slot and is served, instead of waiting for the handshake
    /// timeout (before: a flood of 300 stalled handshakes a second made every new client wait ~7 s).
    @Test func aStalledHandshakeGivesItsSlotToANewClient() async throws {
        let server = try await tlsServer("--tls-max-handshakes", "2", "--tls-handshake-timeout", "600")
        defer { server.stop() }
        let holders = try await stalledHandshakes(2, port: server.port)
        // Both have held their slots for more than a second from here on (a slow machine only adds).
        try await Task.sleep(for: .milliseconds(1500))
        let client = try tlsClient(port: server.port)
        defer { client.close() }
        #expect(try await client.call(HealthMethods.check, HealthCheckRequest()).status == .serving)
        // One slot was taken back for it: the oldest holder's, which is closed.
        #expect(await server.waitForLog("event=tls_handshake_evicted"), "\(server.stderr)")
        let evictions = server.stderr.split(separator: "\n").filter { $0.contains("event=tls_handshake_evicted") }
        #expect(evictions.count == 1, "\(server.stderr)")
        #expect(await offThePool { holders[0].isClosedByServer() }, "the oldest stalled handshake was closed")
    }

    /// A connection waiting for a handshake slot is under the handshake timeout too: behind a
    /// peer that holds the only slot forever, it is closed, not kept.
    @Test func aConnectionWaitingForAHandshakeSlotTimesOut() async throws {
        let server = try await tlsServer("--tls-max-handshakes", "1", "--tls-handshake-timeout", "5",
                                         "--tls-evict-handshakes-after", "0")
        defer { server.stop() }
        let holder = try RawConnection(port: server.port)
        holder.send([0x16, 0x03, 0x01, 0x02])  // a record header, never its body
        // Whichever of the two the server reads first holds the slot; the other waits.
        let waiting = try RawConnection(port: server.port)
        waiting.send([0x16, 0x03, 0x01, 0x02])
        #expect(await server.waitForLog("event=tls_handshakes_full"), "\(server.stderr)")
        let closed = await offThePool { waiting.isClosedByServer() && holder.isClosedByServer() }
        #expect(closed, "both connections were closed by their handshake timeout")
        #expect(await eventually { server.stderr.components(separatedBy: "event=tls_handshake_timeout").count == 3 },
                "both connections timed out: \(server.stderr)")
    }

    /// A ClientHello whose handshake header claims 131,000 bytes (OpenSSL would take up to
    /// 128 KiB and buffer all of it while the peer stalls) is refused at its first bytes, logged
    /// with the reason; a real one is still served.
    @Test func aClientHelloClaimingMoreThan16KiBIsRefusedAtOnce() async throws {
        let server = try await tlsServer("--tls-handshake-timeout", "3600")
        defer { server.stop() }
        let claimed = 131_000
        let start: [UInt8] = [0x16, 0x03, 0x01, 0x40, 0x00, 0x01,
                              UInt8(claimed >> 16), UInt8((claimed >> 8) & 0xFF), UInt8(claimed & 0xFF), 0x03, 0x03]
        let peer = try RawConnection(port: server.port)
        peer.send(start + [UInt8](repeating: 0x42, count: 8000))  // the first record, never finished
        #expect(await offThePool { peer.isClosedByServer() }, "the big ClientHello was kept")
        #expect(await server.waitForLog("the ClientHello is too large: 131000 bytes claimed, at most 16384 accepted"),
                "\(server.stderr)")
        #expect(server.stderr.contains("event=tls_handshake_failed"), "\(server.stderr)")
        let ca = certificates.caCertificate
        let reply = try await offThePool { () throws -> UInt64? in
            let real = try TLSPeer(port: server.port, ca: ca)
            real.raw.send(try real.seal(Self.health(9)))
            return real.receive()?.callID
        }
        #expect(reply == 9)
    }

    /// A TLS 1.3 ClientHello that offers x25519 but sends no key share for it: the server
    /// answers with a HelloRetryRequest (RFC 8446 §4.1.4) and waits for a second ClientHello.
    static func clientHelloWithoutKeyShare() -> [UInt8] {
        func vector16(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
        func vector8(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count)] + bytes }
        func extensionBlock(_ type: UInt16, _ data: [UInt8]) -> [UInt8] { [UInt8(type >> 8), UInt8(type & 0xFF)] + vector16(data) }
        let extensions = extensionBlock(43, vector8([0x03, 0x04]))  // supported_versions: TLS 1.3
            + extensionBlock(10, vector16([0x00, 0x1D]))  // supported_groups: x25519
            + extensionBlock(13, vector16([0x04, 0x03, 0x08, 0x04]))  // signature_algorithms
            + extensionBlock(51, vector16([]))  // key_share: none
        let body: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 7, count: 32) + vector8([UInt8](repeating: 9, count: 32))
            + vector16([0x13, 0x01, 0x13, 0x02]) + vector8([0x00]) + vector16(extensions)
        let message: [UInt8] = [0x01, 0x00, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        return [0x16, 0x03, 0x01] + vector16(message)
    }

    /// Audit 36 M1: the limit held only for the first ClientHello. After a HelloRetryRequest a
    /// second one claiming 131,000 bytes was buffered by OpenSSL while its peer stalled (about
    /// 200 KB a handshake, 227 MiB with every handshake slot taken). It is refused as the first.
    @Test func aSecondClientHelloAfterAHelloRetryRequestIsHeldToTheSameLimit() async throws {
        let server = try await tlsServer("--tls-handshake-timeout", "3600")
        defer { server.stop() }
        let peer = try RawConnection(port: server.port)
        peer.send(Self.clientHelloWithoutKeyShare())
        var buffer = [UInt8](repeating: 0, count: 4096)
        let answered = buffer.withUnsafeMutableBytes { peer.receiveSome(into: $0, within: 60) }
        // A handshake record: the HelloRetryRequest (a ServerHello with the RFC's fixed random).
        #expect(answered > 0 && buffer[0] == 0x16, "\(answered) bytes: \(server.stderr)")
        let claimed = 131_000
        peer.send([0x16, 0x03, 0x03, 0x40, 0x00, 0x01, UInt8(claimed >> 16), UInt8((claimed >> 8) & 0xFF),
                   UInt8(claimed & 0xFF), 0x03, 0x03] + [UInt8](repeating: 0x42, count: 8000))
        #expect(await offThePool { peer.isClosedByServer() }, "the big second ClientHello was kept")
        #expect(await server.waitForLog("the ClientHello is too large: 131000 bytes claimed, at most 16384 accepted"),
                "\(server.stderr)")
    }

    /// A connection waiting for a handshake slot is read no further than one TLS record
    /// (16 KiB and its header) however much it sent: the rest waits in the kernel, not in the
    /// server (which held its whole first read, 64 KiB). The budget count in the debug line of
    /// the slot holder's close is what the waiting peer holds.
    @Test func aConnectionWaitingForAHandshakeSlotHoldsAtMostOneRecord() async throws {
        let server = try await tlsServer("--log-level", "debug", "--tls-max-handshakes", "1", "--tls-handshake-timeout", "3600",
                                         "--tls-evict-handshakes-after", "0")
        defer { server.stop() }
        // A peer that stalls after the server's first flight holds the only slot.
        var holder: RawConnection? = try await stalledHandshakes(1, port: server.port).first
        let waiting = try RawConnection(port: server.port)
        // Handshake records of 16 KiB, a ClientHello header claiming 1,000 bytes first: 256 KiB in all.
        var burst: [UInt8] = []
        for index in 0..<16 {
            burst += [0x16, 0x03, 0x01, 0x40, 0x00]
            burst += index == 0 ? [0x01, 0x00, 0x03, 0xE8] + [UInt8](repeating: 0, count: 16380)
                : [UInt8](repeating: 0, count: 16384)
        }
        _ = waiting.sendWithoutBlocking(burst, seconds: 5)
        #expect(await server.waitForLog("event=tls_handshakes_full"), "\(server.stderr)")
        #expect(holder != nil)
        holder = nil  // its close logs what the budget holds: the waiting peer's bytes
        #expect(await server.waitForLog("event=connection_closed"), "\(server.stderr)")
        let held = server.stderr.split(separator: "\n").filter { $0.contains("event=connection_closed") }
            .compactMap { line in line.split(separator: " ").first { $0.hasPrefix("budget_bytes=") }
                .flatMap { Int($0.dropFirst("budget_bytes=".count)) } }
        #expect(!held.isEmpty && held.allSatisfy { $0 <= 16 * 1024 + 5 }, "held \(held): \(server.stderr)")
        _ = waiting
    }

    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// Raises this process's descriptor limit (servers it starts inherit it); false when
    /// the hard limit is lower.
    static func raiseDescriptorLimit(to wanted: rlim_t) -> Bool {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        if limit.rlim_cur >= wanted { return true }
        guard limit.rlim_max >= wanted else { return false }
        limit.rlim_cur = wanted
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0
    }

    static func health(_ callID: UInt64) -> [UInt8] {
        Frame.encode(RequestEnvelope(callID: callID, method: "/grpc.health.v1.Health/Check", payload: []))
    }

    @Test func framesSplitAcrossRecordsAndWritesAtEverySize() async throws {
        let server = try await tlsServer("--log-level", "debug")
        defer { server.stop() }
        let ca = certificates.caCertificate
        let replies = try await offThePool { () throws -> [UInt64] in
            let peer = try TLSPeer(port: server.port, ca: ca)
            // 300 calls: each frame in a record of its own, then many frames per record, then
            // one frame cut over several records, and the ciphertext sent in uneven pieces.
            var ciphertext: [UInt8] = []
            for id in 1...100 { ciphertext += try peer.seal(Self.health(UInt64(id))) }
            ciphertext += try peer.seal((101...200).flatMap { Self.health(UInt64($0)) })
            for id in 201...300 {
                let frame = Self.health(UInt64(id))
                for byte in frame { ciphertext += try peer.seal([byte]) }
            }
            var generator = SplitMix64(seed: 42)
            var offset = 0
            while offset < ciphertext.count {
                let size = min(ciphertext.count - offset, 1 + Int(generator.next() % 700))
                peer.raw.send(Array(ciphertext[offset..<(offset + size)]))
                offset += size
            }
            var ids: [UInt64] = []
            while ids.count < 300, let reply = peer.receive() {
                #expect(reply.statusCode == .ok)
                ids.append(reply.callID)
            }
            return ids.sorted()
        }
        #expect(replies == Array(1...300), "\(server.stderr)")
    }

    @Test func aFrameOverTheLimitInsideTLSGetsAnEncryptedErrorFrame() async throws {
        let server = try await tlsServer()
        defer { server.stop() }
        let ca = certificates.caCertificate
        let reply = try await offThePool { () throws -> (ResponseEnvelope?, Bool) in
            let peer = try TLSPeer(port: server.port, ca: ca)
            peer.raw.send(try peer.seal([0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3]))
            let error = peer.receive()
            return (error, peer.raw.isClosedByServer())
        }
        #expect(reply.0?.callID == 0)
        #expect(reply.0?.statusCode == .resourceExhausted)
        #expect(reply.0?.statusMessage.contains("exceeds the maximum") == true, "\(String(describing: reply.0))")
        #expect(reply.1, "then the server closes")
    }

    /// close_notify: the peer sends nothing more. A call in flight still gets its reply; then
    /// the server closes, and whatever the peer goes on sending is not kept (it was buffered
    /// whole: 1 GiB sent after close_notify held ~1 GB of the server's memory).
    @Test func afterCloseNotifyTheServerAnswersThenClosesAndKeepsNothingMore() async throws {
        let server = try await tlsServer("--no-seed")
        defer { server.stop() }
        let ca = certificates.caCertificate
        let outcome = try await offThePool { () throws -> (ResponseEnvelope?, Bool) in
            let peer = try TLSPeer(port: server.port, ca: ca)
            try peer.sendThenCloseNotify(Self.health(7))
            let reply = peer.receive()
            // 64 MiB more after close_notify: never read, and the connection is ended.
            let junk = [UInt8](repeating: 0x17, count: 1 << 20)
            var sent = 0
            for _ in 0..<64 {
                let count = peer.raw.sendWithoutBlocking(junk, seconds: 2)
                sent += count
                if count < junk.count { break }
            }
            _ = sent
            return (reply, peer.raw.isClosedByServer())
        }
        #expect(outcome.0?.callID == 7 && outcome.0?.statusCode == .ok, "\(String(describing: outcome.0))")
        #expect(outcome.1, "the server did not close after close_notify")
        #expect(Self.residentKilobytes(pid: server.processIdentifier) < 200_000)
    }

    /// More pipelined calls than one pass handles (64), then close_notify, in one write: every
    /// call is answered before the server closes (review 32: the frames left for the next
    /// pass were dropped with the partial frame at end of input).
    @Test func callsPipelinedWithCloseNotifyAreAllAnswered() async throws {
        let server = try await tlsServer("--no-seed")
        defer { server.stop() }
        let ca = certificates.caCertificate
        let ids = try await offThePool { () throws -> [UInt64] in
            let peer = try TLSPeer(port: server.port, ca: ca)
            // And half a frame after them: dropped, the whole ones kept.
            try peer.sendThenCloseNotify((1...200).flatMap { Self.health(UInt64($0)) } + Array(Self.health(201).prefix(7)))
            var ids: [UInt64] = []
            while let reply = peer.receive() {
                #expect(reply.statusCode == .ok)
                ids.append(reply.callID)
            }
            return ids
        }
        #expect(ids.sorted() == Array(1...200), "\(ids.count) answered")
    }

    /// Slowloris over TLS: a record held open (here all but its last byte) passes nothing to
    /// the transports, yet counts as a partial frame: `--frame-timeout` ends the connection with
    /// the encrypted error frame (before, each trickled byte only reset the idle timer).
    @Test func aTLSRecordHeldOpenIsEndedByTheFrameTimeout() async throws {
        let server = try await tlsServer("--frame-timeout", "1", "--idle-timeout", "3600")
        defer { server.stop() }
        let ca = certificates.caCertificate
        let peer = try await offThePool { () throws -> TLSPeer in
            let peer = try TLSPeer(port: server.port, ca: ca)
            let record = try peer.seal(Self.health(1))
            peer.raw.send(Array(record.dropLast()))
            return peer
        }
        #expect(await server.waitForLog("event=frame_timeout"), "\(server.stderr)")
        let outcome = await offThePool { (peer.receive(), peer.raw.isClosedByServer()) }
        #expect(outcome.0?.callID == 0 && outcome.0?.statusCode == .deadlineExceeded, "\(String(describing: outcome.0))")
        #expect(outcome.0?.statusMessage == "TLS record not completed within 1 s", "\(String(describing: outcome.0))")
        #expect(outcome.1, "then the server closes")
    }

    /// Normal closes end with close_notify, so the peer can tell them from a truncation: after
    /// the peer's close_notify, after its TCP half-close, and for an idle connection when the
    /// server stops (SIGTERM). Each gets its reply first.
    @Test func normalClosesSendCloseNotify() async throws {
        let server = try await tlsServer("--no-seed")
        defer { server.stop() }
        let ca = certificates.caCertificate
        let port = server.port
        let afterCloseNotify = try await offThePool { () throws -> (UInt64?, Bool) in
            let peer = try TLSPeer(port: port, ca: ca)
            try peer.sendThenCloseNotify(Self.health(1))
            return (peer.receive()?.callID, peer.readToEndSawCloseNotify())
        }
        #expect(afterCloseNotify.0 == 1)
        #expect(afterCloseNotify.1, "no close_notify after the peer's close_notify")
        let afterHalfClose = try await offThePool { () throws -> (UInt64?, Bool) in
            let peer = try TLSPeer(port: port, ca: ca)
            peer.raw.send(try peer.seal(Self.health(2)))
            peer.raw.shutdownSending()
            return (peer.receive()?.callID, peer.readToEndSawCloseNotify())
        }
        #expect(afterHalfClose.0 == 2)
        #expect(afterHalfClose.1, "no close_notify after the peer's TCP half-close")
        let idle = try await offThePool { () throws -> TLSPeer in
            let peer = try TLSPeer(port: port, ca: ca)
            peer.raw.send(try peer.seal(Self.health(3)))
            guard peer.receive()?.callID == 3 else { throw SupportError("no reply to the idle peer's call") }
            return peer
        }
        #expect(server.stop() == 0)
        #expect(await offThePool { idle.readToEndSawCloseNotify() }, "no close_notify when the server stopped")
    }

    static func residentKilobytes(pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func aCorruptedRecordClosesOnlyThatConnection() async throws {
        let server = try await tlsServer("--log-level", "debug")
        defer { server.stop() }
        let bystander = try tlsClient(port: server.port)
        defer { bystander.close() }
        _ = try await bystander.callRaw(path: "/grpc.health.v1.Health/Check", payload: [])

        let ca = certificates.caCertificate
        let closed = try await offThePool { () throws -> Bool in
            let peer = try TLSPeer(port: server.port, ca: ca)
            var record = try peer.seal(Self.health(1))
            record[record.count - 3] ^= 0x5A  // the authentication tag no longer matches
            peer.raw.send(record)
            return peer.raw.isClosedByServer()
        }
        #expect(closed)
        #expect(await server.waitForLog("event=tls_failed"), "\(server.stderr)")
        _ = try await bystander.callRaw(path: "/grpc.health.v1.Health/Check", payload: [])

        // A cleartext frame after a TLS handshake is a record error too (not taken for a lean frame).
        let cleartextInside = try await offThePool { () throws -> Bool in
            let peer = try TLSPeer(port: server.port, ca: ca)
            peer.raw.send(Self.health(1))
            return peer.raw.isClosedByServer()
        }
        #expect(cleartextInside)
        _ = try await bystander.callRaw(path: "/grpc.health.v1.Health/Check", payload: [])
    }
}
