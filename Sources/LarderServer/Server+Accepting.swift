import LarderAPI
import LarderReactor
import LarderStore
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
                logger.warn("accept_failed", ["error": error])
                return
            }
            guard let (fd, peer) = accepted else { return }
            if connections.count >= configuration.maxConnections {
                refuse(fd: fd, peer: peer)
                continue
            }
            let connection = Connection(id: nextConnectionID, fd: fd, peer: peer, server: self,
                                        maxFrameBytes: configuration.maxFrameBytes)
            nextConnectionID += 1
            do {
                try loop.register(fd, for: .readable, handler: connection)
            } catch {
                SocketIO.close(fd)
                continue
            }
            connections[connection.id] = connection
            metrics.connectionAccepted()
            logger.debug("connection_opened", ["conn": connection.id, "peer": peer])
        }
    }

    /// Answers a connection over the limit with a connection-level error and closes it.
    func refuse(fd: Int32, peer: SocketAddress) {
        logger.warn("connection_refused", ["peer": peer, "reason": "max connections (\(configuration.maxConnections)) reached"])
        let frame = ResponseFrame.encode(callID: 0, result: .failure(RPCError(
            .resourceExhausted, "server has reached its maximum of \(configuration.maxConnections) connections")))
        _ = frame.withUnsafeBytes { try? SocketIO.write(fd, $0) }
        SocketIO.close(fd)
    }
}
