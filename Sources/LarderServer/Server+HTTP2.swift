import LarderHTTP2
import LarderReactor
import LarderSystem
import LarderWire

/// gRPC over HTTP/2 on the lean protocol's port: a connection whose first bytes are the
/// HTTP/2 client preface is driven through an nghttp2 session (`HTTP2Link`), and its
/// calls (unary and streaming) start in the same `CallCore`.
extension Server {
    /// The session settings for this server's limits.
    var http2Configuration: GRPCServerConfiguration {
        var settings = GRPCServerConfiguration()
        settings.maxConcurrentStreams = UInt32(clamping: configuration.maxCallsPerConnection)
        settings.maxMessageSize = configuration.maxFrameBytes
        settings.maxDecompressedBytesPerRead = 2 * configuration.maxFrameBytes
        configuration.adjustHTTP2(&settings)
        return settings
    }

    /// Decides a new connection's protocol from its first bytes (held in `sniffBuffer`);
    /// returns false while they could still be either.
    func sniffProtocol(of connection: Connection) -> Bool {
        switch HTTP2Preface.match(connection.sniffBuffer) {
        case .needMoreBytes:
            return false
        case .notHTTP2:
            connection.sniffing = false
            let bytes = connection.sniffBuffer
            connection.sniffBuffer = []
            bytes.withUnsafeBytes { connection.decoder.append($0) }
            return true
        case .http2:
            connection.sniffing = false
            let bytes = connection.sniffBuffer
            connection.sniffBuffer = []
            do {
                connection.http2 = try HTTP2Link(configuration: http2Configuration, resolve: core.resolveMethod,
                                                 refusesAtOnce: refusesAtOnce(on: connection))
            } catch {
                close(connection, reason: "cannot start an HTTP/2 session: \(error)")
                return true
            }
            logger.debug("http2_connection", ["conn": connection.id, "peer": connection.peer])
            bytes.withUnsafeBytes { receiveHTTP2($0, on: connection) }
            return true
        }
    }

    /// Feeds bytes read from an HTTP/2 connection to its session, starts the calls they
    /// complete, and queues what the session has to send.
    func receiveHTTP2(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        guard let link = connection.http2 else { return }
        var events = link.takeEventBuffer()
        defer { link.returnEventBuffer(&events) }
        do {
            try link.session.receive(bytes, events: &events)
            handleHTTP2(events, on: connection, link: link)
            guard !connection.isClosed else { return }
            trackIncompleteRequests(of: connection, link: link, events: events)
            if let hold = link.session.takeReadHold() { holdReads(of: connection, for: hold) }
        } catch {
            logger.warn("http2_connection_failed", ["conn": connection.id, "peer": connection.peer,
                                                    "reason": "\(error)"])
            endHTTP2(connection, link: link)
            return
        }
        pumpHTTP2(connection)
    }

    private func handleHTTP2(_ events: [GRPCServerEvent], on connection: Connection, link: HTTP2Link) {
        if let refusal = connection.refusal {
            refuseHTTP2Calls(events, on: connection, link: link, refusal.error)
            return
        }
        for event in events {
            // Delivering replies below writes to every connection they touched, this one too,
            // and a failed write closes it: the core has let it go, so nothing more starts on it.
            guard !connection.isClosed else { return }
            switch link.handle(event) {
            case .start(let head, let method, let message)?:
                if link.cancelledSinceDelivery {
                    // A cancelled stream's end (its handler finished on the loop) frees its slot first.
                    link.cancelledSinceDelivery = false
                    core.deliverReplies()
                    guard !connection.isClosed else { return }
                }
                // What the session holds now (answers of calls earlier in this read included)
                // is in the budget before this call is admitted.
                link.account(to: connection.usage)
                let now = connection.lastActivity
                let deadline = head.timeoutNanoseconds.map { timeout in
                    let (sum, overflow) = now.addingReportingOverflow(timeout)
                    return overflow ? UInt64.max : sum
                }
                message.withUnsafeBytes { payload in
                    core.start(IncomingCall(method: method, callID: UInt64(head.streamID),
                                            metadata: CallMetadata(http2: head.metadata), deadline: deadline,
                                            receivedAt: now, requestBytes: message.count + 5, payload: payload),
                               on: connection)
                }
            case .receive(let callID, let message)?:
                message.withUnsafeBytes { core.receive($0, callID: callID, on: connection) }
            case .halfClose(let callID)?:
                core.halfClose(callID: callID, on: connection)
            case .cancel(let callID)?:
                core.cancel(callID: callID, on: connection)
            case .refused(let callID, let path, let reason)?:
                core.countAnsweredByTransport(callID: callID, path: path, reason, receivedAt: connection.lastActivity,
                                              on: connection)
            case nil:
                break
            }
        }
    }

    /// A connection the server serves no call on (`Connection.refusal`: an h2c client of a
    /// `--tls-only` server): each call is answered with the refusal, at the transport, never
    /// reaching the core; then a GOAWAY `INADEQUATE_SECURITY` with the same text ends it.
    private func refuseHTTP2Calls(_ events: [GRPCServerEvent], on connection: Connection, link: HTTP2Link,
                                  _ refusal: RPCError) {
        var answered = false
        for event in events {
            guard case .start(let head, _, _)? = link.handle(event) else { continue }
            link.answer(callID: UInt64(head.streamID), result: .failure(refusal))
            answered = true
        }
        if answered { failHTTP2(connection, link: link, refusal, code: .inadequateSecurity) }
    }

    /// The lean protocol's partial-frame timer, for requests: while the session holds request
    /// bytes (a partial message, or a whole request waiting for its half-close), the connection
    /// must complete one within `--frame-timeout`, counted from the last read that completed
    /// a message or request; otherwise the tick ends it (a peer trickling bytes, or one the
    /// memory budget stopped reading, holds them no longer). The timer is cleared by
    /// `pumpHTTP2`, which follows every receive, once the session holds no request bytes.
    private func trackIncompleteRequests(of connection: Connection, link: HTTP2Link, events: [GRPCServerEvent]) {
        guard link.session.holdsIncompleteInput else { return }
        let completed = events.contains { event in
            switch event {
            case .request, .message: true
            default: false
            }
        }
        if completed || connection.partialFrameSince == nil { connection.partialFrameSince = connection.lastActivity }
    }

    /// Reads nothing more from a client that resets started calls faster than the session's
    /// bucket allows, for `nanoseconds` (until the bucket refills), rounded up to the next tick
    /// (`Server.tick`, every 250 ms, resumes): its calls in flight go on and their replies are
    /// written. Logged once a hold (`http2_reads_held`, rate-limited). Not while draining.
    private func holdReads(of connection: Connection, for nanoseconds: UInt64) {
        guard drainDeadline == nil else { return }
        let wasHeld = connection.readsHeldUntil != nil
        connection.readsHeldUntil = max(connection.readsHeldUntil ?? 0, connection.lastActivity &+ nanoseconds)
        connection.updateInterest()
        guard !wasHeld else { return }
        logger.info("http2_reads_held", ["conn": connection.id, "peer": connection.peer,
                                         "ms": nanoseconds / 1_000_000,
                                         "reason": "the client resets started calls faster than the server allows"])
    }

    /// Moves what the session has to send into the connection's output (written by `flush`).
    func pumpHTTP2(_ connection: Connection) {
        guard let link = connection.http2, !connection.isClosed else { return }
        var events = link.takeEventBuffer()
        defer { link.returnEventBuffer(&events) }
        do throws(GRPCSessionError) {
            try connection.appendOutput { (output: inout OutputBuffer) throws(GRPCSessionError) in
                try link.session.writeOutput(events: &events) { output.append($0) }
            }
        } catch {
            endHTTP2(connection, link: link)
            return
        }
        if !events.isEmpty { handleHTTP2(events, on: connection, link: link) }
        link.noteHeldOutput()
        link.account(to: connection.usage)
        if !link.session.holdsIncompleteInput { connection.partialFrameSince = nil }
        // A GOAWAY with an error ends the connection even when nghttp2 would go on (its own
        // rapid-reset limiter, now off, sent one and kept serving the open streams: a Watch on
        // the connection then hung, the client having given it up).
        if (link.session.isFinished || link.session.closeReason != nil) && !connection.isClosing {
            // A GOAWAY with an error that nghttp2 sent by itself (a frame breaking RFC 9113 that
            // it caught): ours are logged where they are raised, since they also end `receive`.
            if let reason = link.session.closeReason {
                logger.warn("http2_connection_failed", ["conn": connection.id, "peer": connection.peer,
                                                        "reason": "\(reason)"])
            }
            connection.state = .closing(since: MonotonicClock.nanoseconds())
        }
    }

    /// A reply record for call `callID` of an HTTP/2 connection; a stream whose peer leaves too
    /// much unread is ended in the core (its stream was reset).
    func deliverHTTP2(_ record: [UInt8], callID: UInt64, isFinal: Bool, on connection: Connection, link: HTTP2Link) {
        if let overrun = link.apply(record, callID: callID, isFinal: isFinal,
                                    outputLimit: configuration.maxBufferedOutputBytes) {
            logger.warn("stream_reset", ["conn": connection.id, "call": callID, "reason": overrun.message])
            core.end(callID: callID, on: connection, overrun)
        }
    }

    /// Ends an HTTP/2 connection for `error` (the server's timeouts: idle, an incomplete
    /// request, a write stall): a GOAWAY with the error's message as debug data — NO_ERROR
    /// for UNAVAILABLE (idle), ENHANCE_YOUR_CALM for a peer that holds resources too long —
    /// then the close. Calls in flight on it are over. `code` overrides the GOAWAY's error code.
    func failHTTP2(_ connection: Connection, link: HTTP2Link, _ error: RPCError, code override: HTTP2ErrorCode? = nil) {
        let code: HTTP2ErrorCode = switch error.code {
        case .unavailable: .noError
        case .deadlineExceeded, .resourceExhausted: .enhanceYourCalm
        default: .internalError
        }
        link.session.close(code: override ?? code, message: error.message)
        endHTTP2(connection, link: link)
    }

    /// Logs the streams nghttp2 refused or reset by itself on a closing connection (the core
    /// never saw those calls, so no call metric counts them): one line per connection.
    func logLibraryResets(of connection: Connection, link: HTTP2Link) {
        let resets = link.session.streamsResetByLibrary
        guard !resets.isEmpty else { return }
        let counts = resets.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key)=\($0.value)" }
        logger.warn("http2_streams_reset", ["conn": connection.id, "peer": connection.peer,
                                            "resets": counts.joined(separator: ",")])
    }

    /// The session gave up (a protocol error, a flood): send its GOAWAY, then close.
    private func endHTTP2(_ connection: Connection, link: HTTP2Link) {
        var bytes: [UInt8] = []
        _ = try? link.session.writeOutput(into: &bytes)
        if !bytes.isEmpty { connection.enqueue(bytes) }
        if !connection.isClosing { connection.state = .closing(since: MonotonicClock.nanoseconds()) }
        connection.flush()
    }

    /// On SIGTERM: every HTTP/2 connection gets a GOAWAY; its calls in flight finish.
    func drainHTTP2Connections() {
        for connection in connections.values {
            guard let link = connection.http2 else { continue }
            link.session.beginDrain()
            pumpHTTP2(connection)
            connection.flush()
        }
    }

    /// For `HTTP2Link`: whether the core would refuse a call of `handler` with `head` unread.
    func refusesAtOnce(on connection: Connection) -> (GRPCRequestHead, MethodHandler) -> Bool {
        let encrypted = connection.isEncrypted
        let loopbackPeer = connection.peer.isLoopback
        return { [unowned core] head, handler in
            // The value the core will check (`CallMetadata`: the last of repeated headers), so
            // that both agree on whether the call is refused; built only when a token is required.
            core.authenticationError(isPublic: handler.isPublic,
                                     authorization: CallMetadata(http2: head.metadata)["authorization"],
                                     encrypted: encrypted, loopbackPeer: loopbackPeer) != nil
        }
    }
}
