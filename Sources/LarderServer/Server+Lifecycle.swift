import LarderAPI
import LarderReactor
import LarderStore
import LarderSystem
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// Closing connections, timeouts, and the graceful drain on shutdown.
extension Server {
    // MARK: - Closing

    /// Sends a connection-level error (call id 0), then closes once it is written.
    func fail(_ connection: Connection, _ error: RPCError) {
        guard !connection.isClosing else { return }
        if let link = connection.http2 {
            failHTTP2(connection, link: link, error)
            return
        }
        connection.enqueue(ResponseFrame.encode(callID: 0, result: .failure(error)).bytes)
        connection.state = .closing(since: MonotonicClock.nanoseconds())
        connection.flush()
    }

    /// Closes `connection` now. `notifyPeer` (a normal end: the peer finished, the server
    /// stops): a TLS connection first sends close_notify, best effort (`sendCloseNotify`).
    func close(_ connection: Connection, reason: String, notifyPeer: Bool = false) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        if notifyPeer { connection.sendCloseNotify() }
        if let link = connection.tls { releaseHandshakeSlot(link) }
        if let waiting = connection.tlsWaitingBytes {  // closed while waiting for a handshake slot
            connection.usage.add(-waiting.count)
            connection.tlsWaitingBytes = nil
        }
        core.unregister(connection)
        if let link = connection.http2 { logLibraryResets(of: connection, link: link) }
        loop.unregister(connection.fd)
        SocketIO.close(connection.fd)
        connection.releaseBudget()
        logger.debug("connection_closed", ["conn": connection.id, "peer": connection.peer, "reason": reason,
                                           "budget_bytes": budget.usedBytes])
        if drainDeadline != nil { finishDrainIfDone() }
    }

    /// Called by a connection whose output has just been written out entirely: a
    /// half-closed one is done after its last reply, and a drain may be complete.
    func outputDrained(_ connection: Connection) {
        if connection.inputClosed && connection.callsInFlight == 0 && !connection.isClosing {
            close(connection, reason: "peer closed", notifyPeer: true)
        }
        if drainDeadline != nil { finishDrainIfDone() }
    }

    // MARK: - Timers and shutdown

    func tick() {
        let now = MonotonicClock.nanoseconds()
        defer { admitWaitingHandshakes() }
        logger.flushSuppressed()
        logCertificateValidity(loaded: false)
        expireConnections(now: now)
        resumeAcceptingIfDue(now: now)
        watchBudget(now: now)
        shedOverBudget()
        returnMemoryWhenQuiet(now: now)
        // Deadlines: unary calls the store has not answered, streams; and the health status
        // Watch streams follow.
        core.expireCalls(now: now)
        core.expireStreams(now: now)
        // Calls that parked after their connection's last write, or wait for the budget to free.
        for connection in connections.values where connection.usage.hasParkedCalls {
            core.resumeParkedCalls(on: connection)
        }
        health.refresh(databaseAvailable: store.isAvailable)
        if let deadline = drainDeadline, now >= deadline {
            endDrainAtDeadline(now: now)
            return
        }
        // The wait for HTTP/2 clients' PING answers ends on its own clock.
        if drainDeadline != nil { finishDrainIfDone(sendingOverdueGoaways: true) }
    }

    /// What a tick does with one connection.
    private enum TimerVerdict {
        case keep
        /// Ends it with an error frame.
        case fail(RPCError)
        /// Closes it without one: it is closing already, and its grace time is over.
        case close
        /// Closes it without one: it reads nothing, so an error frame would not reach it.
        case writeStalled
        /// Closes it without one: its client ended its input with responses waiting for its
        /// HTTP/2 flow-control window, which it can no longer open.
        case windowNeverOpens
        /// Sends it a keepalive PING (`keepaliveVerdict`).
        case sendKeepalivePing
    }

    /// Ends the connections whose timers ran out. Decides first, acts after: acting may close
    /// connections, which edits the dictionary. Stalled writers are closed last.
    func expireConnections(now: UInt64) {
        var ended: [(Connection, TimerVerdict)] = []
        for connection in connections.values {
            let verdict = timerVerdict(for: connection, now: now)
            if case .keep = verdict { continue }
            ended.append((connection, verdict))
        }
        for (connection, verdict) in ended {
            switch verdict {
            case .fail(let error): fail(connection, error)
            case .sendKeepalivePing:
                connection.keepalivePingSentAt = now
                connection.http2?.sendKeepalivePing()
                pumpHTTP2(connection)
                connection.flush()
            case .close: close(connection, reason: "closed after error")
            case .windowNeverOpens:
                close(connection, reason: "the client ended its input with responses waiting for its flow-control "
                                      + "window, which it can no longer open")
            case .keep, .writeStalled: break
            }
        }
        for (connection, verdict) in ended {
            guard case .writeStalled = verdict else { continue }
            logger.warn("write_stall", ["conn": connection.id, "peer": connection.peer,
                                        "unwritten_bytes": connection.bufferedOutputBytes,
                                        "seconds": configuration.writeStallTimeoutSeconds])
            close(connection, reason: "write stalled")
        }
    }

    /// The timers of one connection: write stall (socket or HTTP/2 window), closing grace,
    /// TLS handshake, refusal, partial frame, idle. Also resumes reading from a connection held
    /// for the memory budget once that no longer holds it.
    private func timerVerdict(for connection: Connection, now: UInt64) -> TimerVerdict {
        let stallLimit = UInt64(configuration.writeStallTimeoutSeconds) * 1_000_000_000
        if stallLimit > 0, let since = connection.writeBlockedSince, now - since > stallLimit {
            return .writeStalled
        }
        // Ended input leaves the client no way to send WINDOW_UPDATE: what waits for its window
        // would wait for the write stall, holding the calls parked behind it (audit 32 F4: ~950
        // calls and 11 MB for 30 s after each close). Only once nothing has moved for a second
        // with the socket drained: responses on streams whose window is open still go out.
        if connection.inputClosed, let link = connection.http2, link.heldOutputBytes > 0,
           connection.bufferedOutputBytes == 0, let since = link.flowStalledSince, now > since,
           now - since > 1_000_000_000, !connection.isClosing {
            return .windowNeverOpens
        }
        if stallLimit > 0, let link = connection.http2, let since = link.flowStalledSince, now > since,
           now - since > stallLimit, !connection.isClosing {
            // The peer reads the socket but never opens its flow-control window: the
            // responses it leaves in the session would be held for as long as it likes.
            logger.warn("write_stall", ["conn": connection.id, "peer": connection.peer,
                                        "held_bytes": link.heldOutputBytes, "seconds": configuration.writeStallTimeoutSeconds])
            return .fail(RPCError(.resourceExhausted,
                "the client did not open its HTTP/2 flow-control window for \(configuration.writeStallTimeoutSeconds) s "
                    + "while \(link.heldOutputBytes) bytes of responses waited (--write-stall-timeout)"))
        }
        if connection.heldForBudget && !connection.usage.mustHoldInput {
            connection.heldForBudget = false
            connection.updateInterest()
        }
        if let until = connection.readsHeldUntil, now >= until {
            connection.readsHeldUntil = nil
            connection.updateInterest()
        }
        switch connection.state {
        case .closing(let since):
            return now - since > 2_000_000_000 ? .close : .keep
        case .open:
            return openConnectionVerdict(for: connection, now: now)
        }
    }

    /// `timerVerdict` for an open connection: handshake, refusal, partial frame, idle.
    private func openConnectionVerdict(for connection: Connection, now: UInt64) -> TimerVerdict {
        let frameLimit = UInt64(configuration.frameTimeoutSeconds) * 1_000_000_000
        let idleLimit = UInt64(configuration.idleTimeoutSeconds) * 1_000_000_000
        if closeIfHandshakeExpired(connection, now: now) || endRefusalIfExpired(connection, now: now) {
            return .keep  // dealt with already
        } else if connection.inputClosed {
            return .keep  // no more frames will come; the replies in flight finish it
        } else if connection.readPaused || connection.readsHeldUntil != nil {
            // The server chose not to read; the peer is not slow.
            connection.restartPartialInputTimers(now: now)
        } else if let since = connection.partialInputSince, now - since > frameLimit {
            logger.warn("frame_timeout", ["conn": connection.id, "peer": connection.peer])
            // A TLS record held open counts as a partial frame (OpenSSL passes none of it on).
            let unfinished = connection.partialInputIsTLSRecord ? "TLS record"
                : connection.http2 == nil ? "frame" : "request message (or its half-close)"
            return .fail(RPCError(.deadlineExceeded, "\(unfinished) not completed within \(configuration.frameTimeoutSeconds) s"))
        } else if idleLimit > 0, connection.callsInFlight == 0, connection.unsentReplyBytes == 0,
                  now - connection.lastActivity > idleLimit {
            logger.debug("idle_timeout", ["conn": connection.id, "peer": connection.peer])
            return .fail(RPCError.unavailable("connection idle for \(configuration.idleTimeoutSeconds) s"))
        }
        return keepaliveVerdict(for: connection, now: now)
    }

    /// HTTP/2 keepalive: a connection with a call in flight is exempt from the idle timeout, and
    /// a quiet Watch writes nothing a write stall would catch, so a client that vanished (its
    /// host gone, a NAT mapping dropped, the process stopped) held its streams until the server
    /// restarted (audit 34 M1). After `--keepalive-time` with nothing read, a PING; with still
    /// nothing read `--keepalive-timeout` later, the connection is closed (GOAWAY), as gRPC
    /// servers do (2 h, 20 s).
    private func keepaliveVerdict(for connection: Connection, now: UInt64) -> TimerVerdict {
        let keepaliveLimit = UInt64(configuration.keepaliveTimeSeconds) * 1_000_000_000
        // Not while the server itself does not read the connection: the answer would wait unread.
        guard keepaliveLimit > 0, connection.http2 != nil else { return .keep }
        guard !connection.readPaused, !connection.heldForBudget, connection.readsHeldUntil == nil else {
            connection.keepalivePingSentAt = nil
            return .keep
        }
        if let sentAt = connection.keepalivePingSentAt {
            if connection.lastRead > sentAt {
                connection.keepalivePingSentAt = nil  // something came back
            } else if now - sentAt > UInt64(configuration.keepaliveTimeoutSeconds) * 1_000_000_000 {
                logger.info("keepalive_timeout", ["conn": connection.id, "peer": connection.peer,
                                                  "calls_in_flight": connection.callsInFlight])
                return .fail(RPCError.unavailable("the client did not answer a keepalive PING within "
                    + "\(configuration.keepaliveTimeoutSeconds) s (--keepalive-timeout)"))
            }
        } else if connection.callsInFlight > 0, now - connection.lastRead > keepaliveLimit {
            return .sendKeepalivePing
        }
        return .keep
    }

    /// At the drain deadline: streams still open end with UNAVAILABLE and the server waits one
    /// more second for their trailers to go out; with none, the loop stops.
    private func endDrainAtDeadline(now: UInt64) {
        let ended = core.endStreams(RPCError.unavailable(
            "server is shutting down: the stream was still open after the drain timeout "
            + "(\(configuration.drainTimeoutSeconds) s); call again on a new connection"))
        if ended > 0 {
            logger.warn("drain_timeout_streams", ["streams_ended": ended])
            drainDeadline = now + 1_000_000_000
            return
        }
        logger.warn("drain_timeout", ["calls_in_flight": callsInFlight])
        stopLoop()
    }

    /// While peers hold more than the budget, ends the open streams (health Watch, reflection)
    /// of the connections whose open calls alone hold more than their share, most first,
    /// `RESOURCE_EXHAUSTED`, until about the excess is given back (the rest, if any, at the next
    /// tick). Admission stops only what a connection over its share would start; what it was
    /// admitted while the share was larger (fewer connections open) stayed, streams for as long
    /// as their peer liked: 330 connections × 1,000 Watch streams with 7 KB of metadata held
    /// 3.3× the budget (audit 32 F1). Chosen by what their streams hold, not by all they hold:
    /// a budget used up by unread replies is not given back by ending a client's one Watch
    /// (review 32). Unary calls end by themselves, and calls waiting for their client to read
    /// are meant to wait; a connection whose calls hold no more than its share loses nothing.
    func shedOverBudget() {
        var excess = budget.usedBytes - budget.limit
        guard excess > 0 else { return }
        let share = budget.share
        let heavy = connections.values.map { ($0, $0.usage.openCallBytes) }
            .filter { connection, open in open > share && !connection.calls.streams.isEmpty }
            .sorted { $0.1 > $1.1 }
        for (connection, open) in heavy where excess > 0 {
            let held = connection.usage.budgetedBytes
            excess -= open
            let error = RPCError(.resourceExhausted,
                                 "the server's memory budget is used up (--memory-budget-bytes \(budget.limit)) and this "
                                    + "connection held \(held) bytes, more than its share of \(share): its open streams were "
                                    + "ended; open fewer streams, then retry")
            let streams = core.endStreams(on: connection, error)
            connection.flushAnswers()
            logger.warn("memory_budget_shed", ["peer": connection.peer, "held_bytes": held, "share_bytes": share,
                                               "streams_ended": streams])
        }
    }

    /// Logs an exhausted memory budget (once per interval): exhausted now, or calls refused
    /// for it since the last line (it may fill and free between two ticks). Gives free memory
    /// back to the system once what peers held has shrunk well below its peak (big replies
    /// leave free heap pages behind that malloc would otherwise keep).
    func watchBudget(now: UInt64) {
        let used = budget.usedBytes
        budgetPeak = max(budgetPeak, used)
        if budget.isExhausted || budget.refusalCount > 0,
           budgetExhaustedLoggedAt.map({ now - $0 >= Self.acceptFailureLogInterval * 1_000_000_000 }) ?? true {
            budgetExhaustedLoggedAt = now
            logger.warn("memory_budget_exhausted", ["used_bytes": used, "budget_bytes": budget.limit,
                                                    "connections": connections.count,
                                                    "calls_refused": budget.takeRefusals()])
        }
        // Connections cost memory the budget does not count (a TLS session: about 20 KiB
        // idle, 45 KiB mid-handshake; LIMITS.md "Memory"), so many of them leaving is a
        // reason to give memory back too.
        let open = connections.count
        if (budgetPeak >= Self.trimThreshold && used <= budgetPeak / 8)
            || (connectionPeak >= Self.trimConnectionThreshold && open <= connectionPeak / 8) {
            budgetPeak = used
            connectionPeak = open
            ProcessMemory.returnFreeMemory()
        }
    }

    /// Gives free heap back to the system once, after traffic stops for `heapReturnIdleSeconds`:
    /// what a burst of big replies left in the malloc heaps (up to 16 MiB each, `ServerMain`)
    /// would otherwise stay until the next burst, since a burst whose clients read their replies
    /// never fills the budget enough for `watchBudget` to give it back.
    func returnMemoryWhenQuiet(now: UInt64) {
        // Traffic is any connection, byte read or byte written: a flood of TLS handshakes that
        // never finish sends no application byte, yet leaves OpenSSL's freed memory behind.
        let traffic = metrics.trafficCount
        if traffic != trafficAtLastTick {
            trafficAtLastTick = traffic
            lastTrafficAt = now
            heapReturnOwed = true
        } else if heapReturnOwed, callsInFlight == 0, now - lastTrafficAt >= Self.heapReturnIdleSeconds * 1_000_000_000 {
            heapReturnOwed = false
            ProcessMemory.returnFreeMemory()
            logger.debug("heap_returned", ["quiet_seconds": Self.heapReturnIdleSeconds])
        }
    }

    /// Seconds without a byte sent after which free heap is given back (`returnMemoryWhenQuiet`).
    static let heapReturnIdleSeconds: UInt64 = 5

    /// Peak bytes held for peers worth giving memory back for once they are gone.
    static let trimThreshold = 16 * 1024 * 1024
    /// Peak connections worth giving memory back for once most have closed.
    static let trimConnectionThreshold = 1024

    func beginDrain() {
        guard drainDeadline == nil else { return }
        core.isDraining = true
        health.markNotServing()
        health.endWatches()
        // The Watch streams' NOT_SERVING and their ends go out before the GOAWAY, for clients that
        // read nothing of a connection after its first GOAWAY (grpclib 0.4 still fails streams it
        // has not handed to its application yet: PROTOCOL.md). Delivered while no drain is set yet,
        // so delivery's check for the drain's end waits for the GOAWAY below.
        core.deliverReplies()
        let now = MonotonicClock.nanoseconds()
        drainStartedAt = now
        drainDeadline = now + UInt64(configuration.drainTimeoutSeconds) * 1_000_000_000
        listening = false
        loop.unregister(listener.fd)
        listener.close()
        logger.info("draining", ["calls_in_flight": callsInFlight, "connections": connections.count])
        // Reads held for rapid resets resume: the drain's PING answer and the requests sent before
        // the GOAWAY must be read to be served (the final GOAWAY bounds what can still come).
        for connection in connections.values where connection.readsHeldUntil != nil {
            connection.readsHeldUntil = nil
            connection.updateInterest()
        }
        drainHTTP2Connections()
        finishDrainIfDone()
    }

    /// How long after the drain began the server waits, with no call left, for HTTP/2 clients
    /// to answer its PING (their GOAWAY round trip): a client that never answers holds the
    /// exit no longer.
    static let drainAcknowledgementWait: UInt64 = 1_000_000_000

    /// Ends the drain once no call is left and every HTTP/2 client had its final GOAWAY (or
    /// 1 s passed for its PING answer); `sendingOverdueGoaways` (the tick, every 250 ms): also
    /// sends the final GOAWAY to each client that has not answered by then and has no call
    /// left, while other connections' calls still run (audit 26 F2). Not on every delivery:
    /// that walk of all connections, per batch of replies, would cost O(connections) each.
    func finishDrainIfDone(sendingOverdueGoaways: Bool = false) {
        guard drainDeadline != nil else { return }
        if finishingDrain {
            drainPassWanted = true
            return
        }
        finishingDrain = true
        defer { finishingDrain = false }
        repeat {
            drainPassWanted = false
            finishDrainPass(sendingOverdueGoaways: sendingOverdueGoaways)
        } while drainPassWanted && !stopped
    }

    private func finishDrainPass(sendingOverdueGoaways: Bool) {
        // An HTTP/2 client may have sent requests before it saw the shutdown notice: they
        // arrive before its PING answer, are served, and the final GOAWAY counts them. Closing
        // earlier would lose them to a reset connection (UNAVAILABLE, never run) instead.
        let waitedForAnswers = drainStartedAt.map {
            MonotonicClock.nanoseconds() &- $0 >= Self.drainAcknowledgementWait
        } ?? true
        if waitedForAnswers && (sendingOverdueGoaways || callsInFlight == 0) {
            // Clients that did not answer get the final GOAWAY all the same once their own calls
            // are answered; a connection with nothing left then closes.
            for connection in connections.values
            where connection.callsInFlight == 0 && connection.http2?.awaitsDrainAcknowledgement == true {
                connection.http2?.finishDrain()
                pumpHTTP2(connection)
                connection.flush()
            }
        }
        guard callsInFlight == 0 else { return }
        if !waitedForAnswers, connections.values.contains(where: { $0.http2?.awaitsDrainAcknowledgement == true }) {
            return
        }
        // Output the HTTP/2 session still holds (a peer's window is closed) is unwritten too, and
        // so are the answers to whole lean frames waiting in a decoder (left for a later pass,
        // `deferFrames`, or read before reading paused for unread replies): each is read already
        // and gets its answer, as the frames handled before it did.
        let unwritten = connections.values.contains {
            $0.bufferedOutputBytes > 0 || ($0.http2?.heldOutputBytes ?? 0) > 0
                || ($0.http2 == nil && !$0.isClosing && !$0.isClosed && $0.decoder.hasWholeFrame)
        }
        if !unwritten { stopLoop() }
    }

    func stopLoop() {
        guard !stopped else { return }
        stopped = true
        loop.stop()
    }
}
