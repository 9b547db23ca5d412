#if canImport(Glibc)
import Glibc
#endif
import LarderHTTP2
import LarderReactor
import LarderSystem
import LarderTLS
import LarderWire

/// TLS on the lean protocol's port: a connection whose first byte opens a TLS handshake
/// record (0x16) gets a session from `tlsContext`; its decrypted bytes are then sniffed
/// and served like a cleartext connection's (HTTP/2 preface or lean frames), whatever
/// ALPN chose (`h2` or `larder`: the client speaks what it negotiated).
extension Server {
    /// The first byte of a TLS record carrying a handshake message (a ClientHello).
    static let tlsHandshakeRecord: UInt8 = 0x16

    /// Loads the TLS context `configuration` asks for; nil when TLS is off. `previous` (on a
    /// reload) hands its session ticket keys on, so clients resume across the reload.
    static func loadTLSContext(_ configuration: ServerConfiguration,
                               replacing previous: TLSServerContext? = nil) throws(RPCError) -> TLSServerContext? {
        guard let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile else { return nil }
        // Not a regular file (a FIFO): OpenSSL's read would wait for a writer.
        for path in [certificate, key] + (configuration.tlsClientCAFile.map { [$0] } ?? []) {
            var info = stat()
            if stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
                throw RPCError.invalidArgument("TLS file \(path) is not a regular file")
            }
        }
        do {
            return try TLSServerContext(certificateChainFile: certificate, privateKeyFile: key,
                                        clientCAFile: configuration.tlsClientCAFile,
                                        clientAuthentication: configuration.tlsClientAuthentication,
                                        replacing: previous)
        } catch {
            throw RPCError(error.code, error.detail.isEmpty ? error.message : "\(error.message) (\(error.detail))")
        }
    }

    /// The most bytes one TLS record takes on the wire: a 5-byte header and 16 KiB of body
    /// (RFC 8446 §5.1; TLS 1.2 allows up to 2 KiB more for compression and padding, which no
    /// ClientHello needs).
    static let maxTLSRecordBytes = 5 + 16 * 1024

    /// The largest ClientHello accepted, by the length its handshake header claims: real ones
    /// are under about 2–4 KiB (post-quantum key shares included), and OpenSSL would otherwise
    /// take up to 128 KiB, buffering each stalled one in full (LIMITS.md "TLS handshake").
    static let maxClientHelloBytes = 16 * 1024

    /// Every byte read from a connection's socket comes here: the first byte decides
    /// between TLS and cleartext; TLS bytes are decrypted; plaintext goes on to the transports.
    func receiveBytes(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        if connection.tlsWaitingBytes != nil {  // read in the same event, before reads were held
            connection.tlsWaitingBytes?.append(contentsOf: bytes)
            connection.usage.add(bytes.count)
            return
        }
        if !connection.securityDecided {
            guard let first = bytes.first else { return }
            connection.securityDecided = true
            if first == Self.tlsHandshakeRecord, tlsContext != nil {
                guard checkClientHelloSize(bytes, on: connection) else { return }
                // Slots taken: evict a stalled handshake for it, unless others already wait (they
                // come first, within a tick: `admitWaitingHandshakes`).
                if tlsHandshakesInProgress >= configuration.tlsMaxHandshakes
                    && (!tlsHandshakeQueue.isEmpty || !evictStalledHandshake(now: connection.lastActivity)) {
                    waitForHandshakeSlot(connection, bytes)
                    return
                }
                guard startTLS(connection), let link = connection.tls else { return }
                receiveCiphertext(bytes, on: connection, link: link)
                return
            } else if configuration.tlsOnly {
                refuseCleartext(connection, firstBytes: bytes)
                return
            }
        }
        guard let link = connection.tls else {
            receivePlaintext(bytes, on: connection)
            return
        }
        // Not once TLS 1.2 is chosen: its client sends no second ClientHello, and its encrypted
        // Finished, in a handshake record, would read as a random header (1 in 256: several MB
        // claimed; review 36 H1). TLS 1.3 encrypts in application-data records.
        if !link.session.isHandshakeComplete && !link.session.isTLS12 {
            guard checkClientHelloSize(bytes, on: connection) else { return }
        }
        receiveCiphertext(bytes, on: connection, link: link)
    }

    /// `--tls-only`: a cleartext connection gets a connection-level error and is closed. One
    /// whose first bytes begin the HTTP/2 client preface (an h2c client: gRPC without TLS
    /// credentials) gets it over HTTP/2, which its client can read, rather than a lean frame
    /// it would report as a malformed HTTP/2 frame: its calls are answered with it (UNAVAILABLE,
    /// the text as grpc-message), then a GOAWAY `INADEQUATE_SECURITY` carrying it ends the
    /// connection (`refuseHTTP2Calls`). A GOAWAY alone, before any call, is not enough: gRPC
    /// clients take it for a lost connection and reconnect until their deadline, text unseen.
    private func refuseCleartext(_ connection: Connection, firstBytes bytes: UnsafeRawBufferPointer) {
        logger.warn("cleartext_refused", ["conn": connection.id, "peer": connection.peer])
        let error = RPCError.unavailable(
            "this server accepts TLS connections only (--tls-only): connect with TLS (larder --tls)")
        guard HTTP2Preface.match(bytes) != .notHTTP2,
              let link = try? HTTP2Link(configuration: http2Configuration, resolve: core.resolveMethod,
                                             refusesAtOnce: refusesAtOnce(on: connection)) else {
            fail(connection, error)
            return
        }
        connection.sniffing = false
        connection.http2 = link
        connection.refusal = (error, connection.lastActivity)
        receiveHTTP2(bytes, on: connection)
    }

    /// From `tick`: an h2c connection refused by `--tls-only` that has made no call within the
    /// TLS handshake timeout gets its GOAWAY now (pings alone would keep it open). True when so.
    func endRefusalIfExpired(_ connection: Connection, now: UInt64) -> Bool {
        guard let refusal = connection.refusal, let link = connection.http2, !connection.isClosing else { return false }
        let limit = UInt64(configuration.tlsHandshakeTimeoutSeconds) * 1_000_000_000
        guard now &- refusal.since > limit else { return false }
        failHTTP2(connection, link: link, refusal.error, code: .inadequateSecurity)
        return true
    }

    /// Looks at what a TLS client sends in the clear until its handshake completes (record and
    /// handshake message headers): a ClientHello that claims more than `maxClientHelloBytes`
    /// (the first, or a second one after a HelloRetryRequest: audit 36 M1, 128 KiB claimed and
    /// held by each stalled handshake), or a first record too short to hold the handshake
    /// header, is refused at once, before OpenSSL buffers any of it. False when the connection
    /// was refused (closed).
    private func checkClientHelloSize(_ bytes: UnsafeRawBufferPointer, on connection: Connection) -> Bool {
        connection.handshakeSizes.consume(bytes)
        let sizes = connection.handshakeSizes
        let reason: String
        if let first = sizes.firstRecordLength, first < 4 {
            reason = "the first TLS record (\(first) bytes) is too short to hold a ClientHello's header"
        } else if sizes.largestClientHello > Self.maxClientHelloBytes {
            reason = "the ClientHello is too large: \(sizes.largestClientHello) bytes claimed, at most "
                + "\(Self.maxClientHelloBytes) accepted"
        } else {
            return true  // anything else that is not a ClientHello: OpenSSL refuses it with its own reason
        }
        logger.warn("tls_handshake_failed", ["conn": connection.id, "peer": connection.peer, "reason": reason])
        close(connection, reason: reason)
        return false
    }

    /// TLS bytes of a connection with a session: decrypted, and the plaintext passed on.
    private func receiveCiphertext(_ bytes: UnsafeRawBufferPointer, on connection: Connection, link: TLSLink) {
        var plaintext = tlsPlaintext
        tlsPlaintext = []
        defer {
            plaintext.removeAll(keepingCapacity: plaintext.capacity <= 1 << 17)
            tlsPlaintext = plaintext
        }
        do {
            if try link.session.receive(bytes, into: &plaintext) { tlsEstablished(connection, link: link) }
        } catch {
            tlsFailed(connection, error, handshakeDone: link.session.isHandshakeComplete)
            return
        }
        link.track(bytes, decrypted: !plaintext.isEmpty, now: connection.lastActivity)
        if !plaintext.isEmpty { plaintext.withUnsafeBytes { receivePlaintext($0, on: connection) } }
        // close_notify: the peer sends nothing more (what it still sends is not read).
        if link.session.peerClosed && !connection.inputClosed && !connection.isClosed {
            peerFinishedSending(connection)
        }
    }

    /// Gives `connection` a TLS session and a handshake slot; false (and the connection
    /// closed) when no session can be made.
    private func startTLS(_ connection: Connection) -> Bool {
        guard let context = tlsContext else { return false }
        do {
            let link = TLSLink(session: try context.makeSession(), startedAt: connection.lastActivity)
            link.holdsHandshakeSlot = true
            tlsHandshakesInProgress += 1
            connection.tls = link
            tlsSlotHolders.append(connection.id)
            pruneSlotHolders()
            return true
        } catch {
            close(connection, reason: "cannot start a TLS session: \(error)")
            return false
        }
    }

    /// All handshake slots are taken: the connection keeps the bytes it sent and is not read
    /// (its peer waits, as in a listen backlog) until `admitWaitingHandshakes` gives it a slot;
    /// its handshake timeout runs from its first byte all the same.
    private func waitForHandshakeSlot(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        if tlsHandshakeQueue.isEmpty {
            logger.warn("tls_handshakes_full", ["in_progress": tlsHandshakesInProgress,
                                                "limit": configuration.tlsMaxHandshakes])
        }
        connection.tlsWaitingBytes = Array(bytes)
        connection.usage.add(bytes.count)
        connection.updateInterest()
        tlsHandshakeQueue.append(connection.id)
    }

    /// A handshake ended (completed, failed, or its connection closed): its slot is free.
    func releaseHandshakeSlot(_ link: TLSLink) {
        guard link.holdsHandshakeSlot else { return }
        link.holdsHandshakeSlot = false
        tlsHandshakesInProgress -= 1
    }

    /// Closes the handshake that has held its slot longest, if it has held it at least
    /// `--tls-evict-handshakes-after` (1 s by default: far longer than a real handshake's round
    /// trips, far shorter than the timeout a flood of stalled ones would otherwise impose; 0:
    /// never); true when one was (its slot is free).
    ///
    /// Without it, a steady flood of stalled handshakes (300 a second, 40 bytes each) kept every
    /// slot taken, and each new TLS client waited ~7 s for one, most of the handshake timeout.
    func evictStalledHandshake(now: UInt64) -> Bool {
        let minimumAge = UInt64(configuration.tlsEvictHandshakesAfterSeconds) * 1_000_000_000
        guard minimumAge > 0 else { return false }
        while tlsSlotHoldersHead < tlsSlotHolders.count {
            let id = tlsSlotHolders[tlsSlotHoldersHead]
            guard let connection = connections[id], let link = connection.tls, link.holdsHandshakeSlot,
                  !connection.isClosing else {
                tlsSlotHoldersHead += 1
                continue
            }
            guard now &- link.startedAt >= minimumAge else { return false }
            tlsSlotHoldersHead += 1
            pruneSlotHolders()
            let seconds = Double((now &- link.startedAt) / 1_000_000) / 1000
            logger.warn("tls_handshake_evicted", ["conn": connection.id, "peer": connection.peer, "seconds": seconds,
                                                  "limit": configuration.tlsMaxHandshakes])
            close(connection, reason: "TLS handshake evicted: every handshake slot was taken and this one had "
                + "run \(seconds) s")
            return true
        }
        return false
    }

    /// Keeps `tlsSlotHolders` about as long as the slots: drops the ids before its head once they
    /// are half of it, and the ids of handshakes that ended once they outnumber the slots.
    private func pruneSlotHolders() {
        if tlsSlotHoldersHead >= 1024 && 2 * tlsSlotHoldersHead >= tlsSlotHolders.count {
            tlsSlotHolders.removeFirst(tlsSlotHoldersHead)
            tlsSlotHoldersHead = 0
        }
        if tlsSlotHolders.count - tlsSlotHoldersHead > 2 * configuration.tlsMaxHandshakes + 1024 {
            tlsSlotHolders = tlsSlotHolders[tlsSlotHoldersHead...].filter { connections[$0]?.tls?.holdsHandshakeSlot == true }
            tlsSlotHoldersHead = 0
        }
    }

    /// From `tick`: starts the handshakes of waiting connections, oldest first, while slots are
    /// free or stalled handshakes can be evicted for them.
    func admitWaitingHandshakes() {
        var admitted = 0
        let now = MonotonicClock.nanoseconds()
        while admitted < tlsHandshakeQueue.count {
            guard let connection = connections[tlsHandshakeQueue[admitted]], !connection.isClosing,
                  let bytes = connection.tlsWaitingBytes else {
                admitted += 1  // closed while it waited
                continue
            }
            guard tlsHandshakesInProgress < configuration.tlsMaxHandshakes || evictStalledHandshake(now: now) else { break }
            admitted += 1
            connection.tlsWaitingBytes = nil
            connection.usage.add(-bytes.count)
            connection.updateInterest()
            guard startTLS(connection), let link = connection.tls else { continue }
            bytes.withUnsafeBytes { receiveCiphertext($0, on: connection, link: link) }
            if !connection.isClosed { connection.flush() }  // the server's first flight
        }
        if admitted > 0 { tlsHandshakeQueue.removeFirst(admitted) }
    }

    private func tlsEstablished(_ connection: Connection, link: TLSLink) {
        releaseHandshakeSlot(link)
        link.established()
        let session = link.session
        logger.debug("tls_established", ["conn": connection.id, "peer": connection.peer, "version": session.protocolVersion,
                                         "alpn": session.negotiatedProtocol ?? "none", "resumed": session.isResumed,
                                         "client_cert": link.clientSubject ?? "none"])
    }

    /// A failed handshake or record: send OpenSSL's alert (if any), then close this connection.
    private func tlsFailed(_ connection: Connection, _ error: TLSError, handshakeDone: Bool) {
        if let link = connection.tls { releaseHandshakeSlot(link) }
        logger.warn(handshakeDone ? "tls_failed" : "tls_handshake_failed",
                    ["conn": connection.id, "peer": connection.peer, "reason": error.message, "detail": error.detail])
        if !connection.isClosing { connection.state = .closing(since: MonotonicClock.nanoseconds()) }
        connection.flush()
    }

    /// From `tick`: true (and the connection closed) when its handshake has run past the limit.
    func closeIfHandshakeExpired(_ connection: Connection, now: UInt64) -> Bool {
        guard !connection.isClosing else { return false }
        let startedAt: UInt64
        if let link = connection.tls, !link.session.isHandshakeComplete {
            startedAt = link.startedAt
        } else if connection.tlsWaitingBytes != nil {
            startedAt = connection.lastActivity  // its first byte; nothing was read since
        } else if configuration.tlsOnly && connection.hasSentNothing {
            startedAt = connection.lastActivity  // connected, and a TLS client speaks first
        } else {
            return false
        }
        let limit = UInt64(configuration.tlsHandshakeTimeoutSeconds) * 1_000_000_000
        guard now &- startedAt > limit else { return false }
        logger.warn("tls_handshake_timeout", ["conn": connection.id, "peer": connection.peer,
                                              "seconds": configuration.tlsHandshakeTimeoutSeconds])
        close(connection, reason: "TLS handshake not completed within \(configuration.tlsHandshakeTimeoutSeconds) s")
        return true
    }

    /// Logs `tls_certificate`: when a certificate is loaded (at start and on SIGHUP), and from
    /// the tick whenever its state changes (its last 14 days begin, it expires). Info while it
    /// is valid; warn when it expires soon, has expired or is not valid yet, since every
    /// client that verifies it then refuses the handshake and only the operator can renew it.
    func logCertificateValidity(loaded: Bool) {
        guard let validity = tlsContext?.certificateValidity else { return }
        let now = Int64(time(nil))
        let state = validity.state(at: now)
        guard loaded || state != tlsCertificateState else { return }
        tlsCertificateState = state
        logger.log(state == .valid ? .info : .warn, "tls_certificate", [
            "subject": validity.subject, "state": state.rawValue,
            "not_before": Logger.timestamp(seconds: validity.notBefore),
            "not_after": Logger.timestamp(seconds: validity.notAfter),
            "days_left": validity.daysLeft(at: now),
        ])
    }
}
