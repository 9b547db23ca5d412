import LarderAPI
import LarderReactor
import LarderStore
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
        connection.enqueue(ResponseFrame.encode(callID: 0, result: .failure(error)))
        connection.state = .closing(since: MonotonicClock.nanoseconds())
        connection.flush()
    }

    func close(_ connection: Connection, reason: String) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        loop.unregister(connection.fd)
        SocketIO.close(connection.fd)
        logger.debug("connection_closed", ["conn": connection.id, "peer": connection.peer, "reason": reason])
    }

    // MARK: - Timers and shutdown

    func tick() {
        let now = MonotonicClock.nanoseconds()
        let idleLimit = UInt64(configuration.idleTimeoutSeconds) * 1_000_000_000
        let frameLimit = UInt64(configuration.frameTimeoutSeconds) * 1_000_000_000
        // Decide first, act after: acting may close connections, which edits the dictionary.
        var expired: [(Connection, RPCError?)] = []
        for connection in connections.values {
            switch connection.state {
            case .closing(let since):
                if now - since > 2_000_000_000 { expired.append((connection, nil)) }
            case .open:
                if connection.readPaused {
                    // The server chose not to read; the peer is not slow.
                    connection.partialFrameSince = connection.partialFrameSince.map { _ in now }
                } else if let since = connection.partialFrameSince, now - since > frameLimit {
                    logger.warn("frame_timeout", ["conn": connection.id, "peer": connection.peer])
                    expired.append((connection, RPCError(
                        .deadlineExceeded, "frame not completed within \(configuration.frameTimeoutSeconds) s")))
                } else if idleLimit > 0, connection.callsInFlight == 0, connection.bufferedOutputBytes == 0,
                          now - connection.lastActivity > idleLimit {
                    logger.debug("idle_timeout", ["conn": connection.id, "peer": connection.peer])
                    expired.append((connection, RPCError.unavailable(
                        "connection idle for \(configuration.idleTimeoutSeconds) s")))
                }
            }
        }
        for (connection, error) in expired {
            if let error { fail(connection, error) } else { close(connection, reason: "closed after error") }
        }
        if let deadline = drainDeadline, now >= deadline {
            logger.warn("drain_timeout", ["calls_in_flight": callsInFlight])
            stopLoop()
        }
    }

    func beginDrain() {
        guard drainDeadline == nil else { return }
        health.markNotServing()
        drainDeadline = MonotonicClock.nanoseconds() + UInt64(configuration.drainTimeoutSeconds) * 1_000_000_000
        listening = false
        loop.unregister(listener.fd)
        listener.close()
        logger.info("draining", ["calls_in_flight": callsInFlight, "connections": connections.count])
        finishDrainIfDone()
    }

    func finishDrainIfDone() {
        guard drainDeadline != nil, callsInFlight == 0 else { return }
        let unwritten = connections.values.contains { $0.bufferedOutputBytes > 0 }
        if !unwritten { stopLoop() }
    }

    func stopLoop() {
        guard !stopped else { return }
        stopped = true
        loop.stop()
    }
}
