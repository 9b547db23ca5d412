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
        while listening {
            let accepted: (fd: Int32, peer: SocketAddress)?
            do {
                accepted = try listener.accept()
            } catch {
                pauseAccepting(after: error)
                return
            }
            guard let (fd, peer) = accepted else { return }
            if connections.count >= configuration.maxConnections {
                refuse(fd: fd, peer: peer)
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
        acceptFailuresUnlogged += 1
        let now = MonotonicClock.nanoseconds()
        if acceptPausedUntil == nil {
            try? loop.modify(listener.fd, for: [])
        }
        acceptPausedUntil = now + Self.acceptPauseNanoseconds
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

    /// From `tick`: resumes accepting after a pause, and logs failures counted since the last line.
    func resumeAcceptingIfDue(now: UInt64) {
        if let until = acceptPausedUntil, now >= until {
            acceptPausedUntil = nil
            if listening { try? loop.modify(listener.fd, for: .readable) }
        }
        if acceptFailuresUnlogged > 0, let error = lastAcceptError,
           let loggedAt = acceptFailureLoggedAt, now - loggedAt >= Self.acceptFailureLogInterval * 1_000_000_000 {
            logAcceptFailures(error, now: now)
        }
    }

    /// Answers a connection over the limit with a connection-level error and closes it.
    func refuse(fd: Int32, peer: SocketAddress) {
        logger.warn("connection_refused", ["peer": peer, "reason": "max connections (\(configuration.maxConnections)) reached"])
        let frame = ResponseFrame.encode(callID: 0, result: .failure(RPCError(
            .resourceExhausted, "server has reached its maximum of \(configuration.maxConnections) connections"))).bytes
        _ = frame.withUnsafeBytes { try? SocketIO.write(fd, $0) }
        SocketIO.close(fd)
    }
}
