#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem
import LarderTLS
import LarderWire

/// The TLS session of one client connection, shared by its reader thread (decrypting)
/// and the tasks that send (encrypting).
///
/// Records must reach the socket in the order they were made, so frames are sealed as
/// `Connection`'s outbound queue writes them, under its lock (never a blocking write); the
/// session itself is behind its own short lock, which the reader takes too. Whatever the reader's
/// `receive` makes (rare: an alert) stays in the session's output for the next sender.
final class TLSChannel: Sendable {
    private let session: LockedValue<TLSSession>

    /// Runs the handshake on the blocking socket `fd` within `timeout`; returns the channel
    /// and any plaintext that arrived with the handshake's last bytes.
    static func handshake(fd: Int32, context: TLSClientContext, serverName: String, address: ServerAddress,
                          timeout: Duration, resuming ticket: TLSSessionTicket?) throws(RPCError) -> (TLSChannel, [UInt8]) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        func failed(_ error: TLSError) -> RPCError {
            RPCError(error.code, "TLS handshake with \(address) failed: \(error.message)")
        }
        let session: TLSSession
        do {
            session = try context.makeSession(serverName: serverName, resuming: ticket)
            try session.startHandshake()
        } catch {
            throw failed(error)
        }
        var plaintext: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            var output: [UInt8] = []
            session.takeOutput(into: &output)
            if case .failure(let error) = Socket.sendAll(fd, output) {
                throw RPCError.unavailable("TLS handshake with \(address) failed: \(error.message)")
            }
            if session.isHandshakeComplete { break }
            let remaining = ContinuousClock.now.duration(to: deadline)
            var pfd = pollfd(fd: fd, events: Int16(truncatingIfNeeded: POLLIN), revents: 0)
            let ready = remaining <= .zero ? 0 : poll(&pfd, 1, Socket.milliseconds(remaining))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                throw RPCError.unavailable("TLS handshake with \(address) did not complete within \(formatSeconds(timeout))")
            }
            let received = buffer.withUnsafeMutableBytes { raw in SystemCall.run { recv(fd, raw.baseAddress, raw.count, 0) } }
            switch received {
            case .success(0):
                throw RPCError.unavailable("TLS handshake with \(address) failed: the server closed the connection "
                    + "(does it serve TLS on this port? see its log)")
            case .success(let count):
                do {
                    _ = try session.receive(Array(buffer[0..<count]), into: &plaintext)
                } catch {
                    var alert: [UInt8] = []
                    session.takeOutput(into: &alert)
                    _ = Socket.sendAll(fd, alert)
                    throw failed(error)
                }
            case .failure(let error):
                throw RPCError.unavailable("TLS handshake with \(address) failed: \(error.message)")
            }
        }
        return (TLSChannel(session: session), plaintext)
    }

    private init(session: consuming sending TLSSession) {
        self.session = LockedValue(session)
    }

    /// The latest resumable session the server sent, copied as it arrives, so the
    /// connection's end (however it ends) cannot make it unusable.
    private let ticket = LockedValue<TLSSessionTicket?>(nil)

    /// The session to offer on the next connection to the same server (nil until the server sent one).
    var resumptionTicket: TLSSessionTicket? {
        ticket.withLock { $0 } ?? session.withLock { $0.resumptionTicket }
    }

    /// Why the connection ended, when the socket failed or closed without a TLS error that
    /// says so: the session's first failure, or a server's probable refusal of this client's
    /// certificate (see `TLSSession.likelyCauseOfAbruptEnd`). Nil when nothing points at TLS.
    var likelyCauseOfAbruptEnd: TLSError? {
        session.withLock { $0.likelyCauseOfAbruptEnd }
    }

    /// Encrypts `plaintext`; returns the ciphertext to write (with anything queued before it).
    func seal(_ plaintext: [UInt8]) -> Result<[UInt8], TLSError> {
        session.withLock { session -> Result<[UInt8], TLSError> in
            do throws(TLSError) {
                try session.send(plaintext)
            } catch {
                return .failure(error)
            }
            var output: [UInt8] = []
            session.takeOutput(into: &output)
            return .success(output)
        }
    }

    /// True once the server sent close_notify: it sends nothing more (PROTOCOL.md §1).
    var peerClosed: Bool { session.withLock { $0.peerClosed } }

    /// Decrypts bytes read from the socket.
    func open(_ ciphertext: [UInt8]) -> Result<[UInt8], TLSError> {
        session.withLock { session -> Result<[UInt8], TLSError> in
            var plaintext: [UInt8] = []
            do throws(TLSError) {
                _ = try session.receive(ciphertext, into: &plaintext)
                // TLS 1.3 tickets come after the handshake, each a new session: keep the latest.
                if let resumable = session.takeNewResumptionTicket() { ticket.withLock { $0 = resumable } }
                return .success(plaintext)
            } catch {
                return .failure(error)
            }
        }
    }
}
