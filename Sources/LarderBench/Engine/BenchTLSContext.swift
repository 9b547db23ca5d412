import LarderClient
import LarderTLS
import LarderSystem
import LarderWire

/// The TLS client context of one bench run and the protocol it offers by ALPN (`larder` for
/// the lean protocol, `h2` for gRPC): connects and runs each connection's handshake, and
/// offers the newest resumable session the server sent on the next connection.
final class BenchTLSContext: Sendable {
    private let context: TLSClientContext
    private let serverName: String
    private let server: BenchAddress
    private let alpn: String
    private let ticket = LockedValue<TLSSessionTicket?>(nil)
    private let summary = LockedValue<TLSSummary?>(nil)

    /// - Throws: what makes the settings unusable (a CA, certificate or key file), as the RPCError to report.
    init(_ tls: ClientTLS, server: BenchAddress, transport: BenchTransport) throws(RPCError) {
        let verification: TLSClientContext.Verification = tls.insecureSkipVerify ? .insecureSkipVerify
            : tls.caFile.map { .caFile($0) } ?? .systemTrustStore
        alpn = transport == .grpc ? "h2" : "larder"
        do throws(TLSError) {
            context = try TLSClientContext(verification: verification, protocols: [alpn],
                                           certificateChainFile: tls.certificateFile, privateKeyFile: tls.keyFile)
        } catch {
            throw RPCError(error.code, error.message)
        }
        serverName = tls.serverName ?? server.host
        self.server = server
    }

    /// The context of the lean-protocol connections that create and delete a run's data; nil without `tls`.
    static func forData(_ tls: ClientTLS?, server: BenchAddress) throws(RPCError) -> BenchTLSContext? {
        guard let tls else { return nil }
        return try BenchTLSContext(tls, server: server, transport: .lean)
    }

    /// What the handshakes so far negotiated; nil before the first.
    var handshakes: TLSSummary? { summary.withLock { $0 } }

    /// Connects to the server and runs the handshake within `timeoutSeconds`.
    /// - Returns: the socket (non-blocking when `nonBlocking`), its TLS link, and any plaintext
    ///   that came with the handshake's last bytes (an HTTP/2 server's SETTINGS).
    /// - Throws: UNAVAILABLE (or UNAUTHENTICATED) `TLS handshake with HOST:PORT failed: …`, naming the fix.
    func connect(timeoutSeconds: Double, nonBlocking: Bool) throws(RPCError) -> (fd: Int32, link: BenchTLSLink, plaintext: [UInt8]) {
        let fd = try TCPSocket.connect(to: server, timeoutSeconds: timeoutSeconds, nonBlocking: true)
        do throws(RPCError) {
            let (link, plaintext) = try handshake(fd, timeoutSeconds: timeoutSeconds)
            if !nonBlocking { TCPSocket.setBlocking(fd) }
            return (fd, link, plaintext)
        } catch {
            TCPSocket.close(fd)
            throw error
        }
    }

    /// Keeps `link`'s session for the next connection when the server has sent a resumable one.
    func keepTicket(from link: BenchTLSLink) {
        guard let resumable = link.session.resumptionTicket else { return }
        ticket.withLock { $0 = resumable }
    }

    private func handshake(_ fd: Int32, timeoutSeconds: Double) throws(RPCError) -> (BenchTLSLink, [UInt8]) {
        let deadline = MonotonicClock.nanoseconds() + MonotonicClock.nanoseconds(seconds: timeoutSeconds)
        func failed(_ error: TLSError) -> RPCError {
            RPCError(error.code, "TLS handshake with \(server) failed: \(error.message)")
        }
        let link: BenchTLSLink
        do throws(TLSError) {
            link = BenchTLSLink(session: try context.makeSession(serverName: serverName, resuming: ticket.withLock { $0 }))
            try link.session.startHandshake()
        } catch {
            throw failed(error)
        }
        var plaintext: [UInt8] = []
        while true {
            try link.flushAll(fd, deadline: deadline, address: server)
            if link.session.isHandshakeComplete { break }
            let open: Bool
            do throws(RPCError) {
                open = try link.readOnce(fd, deadline: deadline, address: server, describe: failed)
            } catch where error.code == .deadlineExceeded {
                throw .unavailable("TLS handshake with \(server) did not complete within the connect timeout "
                    + "(\(Format.seconds(timeoutSeconds)), --connect-timeout; does it serve TLS on this port?)")
            }
            guard open else {
                throw .unavailable("TLS handshake with \(server) failed: the server closed the connection "
                    + "(does it serve TLS on this port? see its log)")
            }
            plaintext += link.plaintext
        }
        let chosen = link.session.negotiatedProtocol
        guard chosen == alpn || (alpn == "larder" && chosen == nil) else {
            throw .unavailable("TLS handshake with \(server): the server chose ALPN \(chosen ?? "none") instead of \(alpn)"
                + (alpn == "h2" ? " (gRPC over TLS needs a server that offers h2)" : ""))
        }
        keepTicket(from: link)
        let resumed = link.session.isResumed
        let version = link.session.protocolVersion
        summary.withLock { summary in
            var current = summary ?? TLSSummary(version: version, alpn: chosen, handshakes: 0, resumed: 0)
            current.handshakes += 1
            if resumed { current.resumed += 1 }
            summary = current
        }
        return (link, plaintext)
    }
}
