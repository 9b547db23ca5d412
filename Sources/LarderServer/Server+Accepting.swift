import LarderAPI
import LarderReactor
import LarderStore
import LarderSystem
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// Taking new connections from the listening socket.
extension Server {

    func acceptConnections() {
        var refusedWithoutDescriptors = 0
        var evicted = false
        while listening {
            let accepted: (fd: Int32, peer: SocketAddress)?
            do {
                accepted = try listener.accept()
            } catch {
                // Out of descriptors: the connection silent longest makes room, as at
                // --max-connections (once a turn), and the accept is tried again.
                if error.errno == EMFILE || error.errno == ENFILE, !evicted, let victim = longestSilentConnection() {
                    evict(victim, outOfDescriptors: true)
                    evicted = true
                    continue
                }
                // Out of descriptors: refuse what waits in the backlog through the spare (a
                // bounded number per turn; the listener stays readable), else rest a moment.
                if error.errno == EMFILE || error.errno == ENFILE, spareDescriptor.isHeld,
                   refusedWithoutDescriptors < Self.refusalsPerTurnWithoutDescriptors,
                   refuseWithoutDescriptors(after: error) {
                    refusedWithoutDescriptors += 1
                    countAcceptFailure(error)
                    continue
                }
                pauseAccepting(after: error)
                return
            }
            guard let (fd, peer) = accepted else { return }
            if connections.count >= configuration.maxConnections && !evicted {
                // Room is made by closing the connection that has sent nothing for longest: a
                // peer holding connections it never speaks on cannot keep others out for
                // --idle-timeout.
                guard let victim = longestSilentConnection() else {
                    refuse(fd: fd, peer: peer, reason: "max connections (\(configuration.maxConnections)) reached",
                           message: "server has reached its maximum of \(configuration.maxConnections) connections")
                    continue
                }
                evict(victim, outOfDescriptors: false)
                evicted = true
            } else if connections.count >= configuration.maxConnections {
                refuse(fd: fd, peer: peer, reason: "max connections (\(configuration.maxConnections)) reached",
                       message: "server has reached its maximum of \(configuration.maxConnections) connections")
                continue
            }
            let connection = Connection(id: core.makeConnectionID(), fd: fd, peer: peer, server: self,
                                        maxFrameBytes: configuration.maxFrameBytes, budget: budget,
                                        tlsAvailable: tlsContext != nil)
            do {
                try loop.register(fd, for: .readable, handler: connection)
            } catch {
                connection.releaseBudget()
                SocketIO.close(fd)
                continue
            }
            connections[connection.id] = connection
            connectionPeak = max(connectionPeak, connections.count)
            core.register(connection)
            metrics.connectionAccepted()
            logger.debug("connection_opened", ["conn": connection.id, "peer": peer])
            queueAsSilent(connection)
            // One accept per eviction each turn, so a burst of newcomers cannot evict every
            // silent connection at once; the listener is level-triggered, so the next turn takes
            // the rest. (A descriptor number the eviction freed is safe to reuse at once: the
            // loop drops the closed one's events still due this turn, `EventLoop.dispatch`.)
            if evicted { return }
        }
    }

    /// Adds a new connection to the eviction candidates, dropping the entries of connections
    /// that spoke or closed once they outnumber the open connections (amortized O(1) an accept).
    private func queueAsSilent(_ connection: Connection) {
        silentQueue.append(connection.id)
        if silentQueueHead > 4096 && silentQueueHead * 2 > silentQueue.count {
            silentQueue.removeFirst(silentQueueHead)  // what evictions walked past
            silentQueueHead = 0
        }
        guard silentQueue.count - silentQueueHead > 2 * max(connections.count, 512) else { return }
        silentQueue = silentQueue[silentQueueHead...].filter { connections[$0]?.hasSentNothing == true }
        silentQueueHead = 0
    }

    /// How long a connection must have sent nothing before a full server closes it for a new one.
    static let silenceBeforeEviction: UInt64 = 1_000_000_000

    /// The connection that has sent nothing for longest, if for `silenceBeforeEviction` or more
    /// (and has no bytes waiting to be read: a client about to make its first call is not
    /// silent). The queue is in accept order, and a silent connection's `lastActivity` is its
    /// accept: the first silent entry is the oldest, and if it is too young, so are the rest.
    private func longestSilentConnection() -> Connection? {
        let now = MonotonicClock.nanoseconds()
        while silentQueueHead < silentQueue.count {
            guard let connection = connections[silentQueue[silentQueueHead]], connection.hasSentNothing else {
                silentQueueHead += 1
                continue
            }
            guard now &- connection.lastActivity >= Self.silenceBeforeEviction else { return nil }
            silentQueueHead += 1
            if SocketIO.hasUnreadInput(connection.fd) { continue }
            return connection
        }
        return nil
    }

    /// Closes a connection that has sent nothing, to admit a new one to a full server (at
    /// --max-connections, or out of file descriptors); a cleartext-capable server tells it why
    /// in a lean error frame first.
    private func evict(_ connection: Connection, outOfDescriptors: Bool) {
        let seconds = (MonotonicClock.nanoseconds() &- connection.lastActivity) / 1_000_000_000
        let full = outOfDescriptors
            ? "out of file descriptors\(DescriptorLimit.current.map { " (limit \($0))" } ?? "")"
            : "at its maximum of \(configuration.maxConnections) connections"
        if !configuration.tlsOnly {
            writeConnectionError(RPCError.unavailable(
                "server is \(full), and this one had sent nothing for \(seconds) s: it was closed for a new one; "
                    + "connect again when you have a call to make"),
                to: connection.fd)
        }
        logger.warn("connection_evicted", ["conn": connection.id, "peer": connection.peer, "silent_s": seconds,
                                           "reason": outOfDescriptors ? "out of file descriptors" : "max connections",
                                           "max_connections": configuration.maxConnections])
        close(connection, reason: outOfDescriptors ? "evicted: silent while out of descriptors"
                                                   : "evicted: silent at max connections")
    }

    /// Connections refused through the spare descriptor in one turn of the loop, at most.
    static let refusalsPerTurnWithoutDescriptors = 64

    /// Takes one pending connection with the spare descriptor and refuses it, saying why; false
    /// when there was none to take (or even that failed).
    private func refuseWithoutDescriptors(after error: SystemError) -> Bool {
        spareDescriptor.withSpareReleased {
            guard let (fd, peer) = (try? listener.accept()) ?? nil else { return false }
            let limit = DescriptorLimit.current.map { " (limit \($0))" } ?? ""
            refuse(fd: fd, peer: peer, reason: "out of file descriptors\(limit): \(error.reason)",
                   message: "server is out of file descriptors\(limit) with \(connections.count) connections open; "
                       + "try again later")
            return true
        }
    }

    /// Seconds between two log lines about failed accepts.
    static let acceptFailureLogInterval: UInt64 = 5

    /// How long the listener rests after a failed accept.
    static let acceptPauseNanoseconds: UInt64 = 200_000_000

    /// A failed accept (typically EMFILE/ENFILE: out of descriptors) leaves the connection
    /// pending, so the listener stays readable: rather than spin, stop watching it for a
    /// moment (`tick` resumes it), and log once per interval with the count of failures.
    func pauseAccepting(after error: SystemError) {
        if acceptPausedUntil == nil {
            try? loop.modify(listener.fd, for: [])
        }
        acceptPausedUntil = MonotonicClock.nanoseconds() + Self.acceptPauseNanoseconds
        countAcceptFailure(error)
    }

    /// Counts a failed accept, logging at most one line per interval.
    private func countAcceptFailure(_ error: SystemError) {
        acceptFailuresUnlogged += 1
        let now = MonotonicClock.nanoseconds()
        if acceptFailureLoggedAt.map({ now - $0 >= Self.acceptFailureLogInterval * 1_000_000_000 }) ?? true {
            logAcceptFailures(error, now: now)
        }
        lastAcceptError = error
    }

    func logAcceptFailures(_ error: SystemError, now: UInt64) {
        logger.warn("accept_failed", ["error": error, "failures": acceptFailuresUnlogged,
                                      "connections": connections.count, "retry_ms": Self.acceptPauseNanoseconds / 1_000_000])
        acceptFailuresUnlogged = 0
        acceptFailureLoggedAt = now
    }

    /// From `tick`: takes the spare descriptor back if it was lost, resumes accepting after a
    /// pause, and logs failures counted since the last line.
    func resumeAcceptingIfDue(now: UInt64) {
        spareDescriptor.retake()
        if let until = acceptPausedUntil, now >= until {
            acceptPausedUntil = nil
            if listening { try? loop.modify(listener.fd, for: .readable) }
        }
        if acceptFailuresUnlogged > 0, let error = lastAcceptError,
           let loggedAt = acceptFailureLoggedAt, now - loggedAt >= Self.acceptFailureLogInterval * 1_000_000_000 {
            logAcceptFailures(error, now: now)
        }
    }

    /// One attempt to write `error` as a lean connection-level frame (call id 0) to a socket
    /// that has nothing else to send: what a peer reads before the server closes it.
    private func writeConnectionError(_ error: RPCError, to fd: Int32) {
        let frame = ResponseFrame.encode(callID: 0, result: .failure(error)).bytes
        _ = frame.withUnsafeBytes { try? SocketIO.write(fd, $0) }
    }

    /// Answers a connection the server cannot take with a connection-level error and closes it.
    func refuse(fd: Int32, peer: SocketAddress, reason: String, message: String) {
        writeConnectionError(RPCError(.resourceExhausted, message), to: fd)
        SocketIO.close(fd)
        // Logged after the frame is written: a peer that saw the line has its answer.
        logger.warn("connection_refused", ["peer": peer, "reason": reason])
    }
}
