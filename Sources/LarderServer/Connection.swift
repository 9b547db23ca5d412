import LarderReactor
import LarderSystem
import LarderTLS
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// One client connection of the lean protocol, owned by the server's event loop thread.
///
/// Holds the bytes read but not yet framed and the replies not yet written; the
/// `Server` decides what frames mean, and the `CallCore` keeps its calls in `calls`.
final class Connection: EventHandler, CallConnection {
    enum State {
        /// Reading calls and writing replies.
        case open
        /// A connection-level error was queued: write it, then close.
        case closing(since: UInt64)
    }

    let id: UInt64
    let fd: Int32
    let peer: SocketAddress
    unowned let server: Server
    var decoder: FrameDecoder
    var state = State.open
    /// Calls read from this connection whose replies have not come back yet.
    let calls = CallBook()
    var callsInFlight: Int { calls.inFlight }
    /// True until the first bytes told the protocol (the HTTP/2 preface or a lean frame).
    var sniffing = true
    /// The first bytes, held while `sniffing`.
    var sniffBuffer: [UInt8] = []
    /// Set when the peer speaks gRPC over HTTP/2: its session and pending requests.
    var http2: HTTP2Link?
    /// False until the first byte told TLS (a handshake record) from cleartext; true from
    /// the start when the server has no TLS.
    var securityDecided: Bool
    /// Set when the connection is TLS: its session and the ciphertext not yet written.
    var tls: TLSLink?
    /// The verified TLS client certificate's subject, for the access log.
    var clientCertificate: String? { tls?.clientSubject }
    var isEncrypted: Bool { tls != nil }
    /// Lean replies are ResponseEnvelope frames, made on the store threads; HTTP/2 ones are
    /// records the loop hands to the session.
    var replyEncoder: any ReplyEncoder { http2 == nil ? LeanReplyEncoder() : HTTP2ReplyEncoder() }
    /// True when a delivered reply found the output empty: `repliesDelivered` writes it.
    private var flushOnDelivery = false
    /// Streaming calls travel over gRPC over HTTP/2 only; the lean protocol carries unary calls.
    var supportsStreaming: Bool { http2 != nil }
    /// HTTP/2 counts each call's stream (`HTTP2Link.account(to:)`); lean calls are counted by the core.
    var accountsCallMemory: Bool { http2 != nil }
    /// HTTP/2: nghttp2 drops the streams a client opens above the last stream id of the drain's
    /// final GOAWAY, so every call that still reaches the core was sent before the client saw
    /// the shutdown notice, and the final GOAWAY counts it as processed: it is served.
    var takesCallsWhileDraining: Bool { http2 != nil }
    /// This connection's bytes in the server's memory budget (its output and undecoded input).
    let usage: ConnectionUsage
    /// Bytes of `decoder`'s buffer counted in `usage`.
    private var accountedInput = 0
    /// True once the peer shut down its sending side: replies to the calls in flight
    /// are still written, then the connection closes.
    var inputClosed = false
    /// True while reading is held back because the memory budget is used up and
    /// this connection holds more than its share.
    var heldForBudget = false
    /// Set while reading is held back because the HTTP/2 client resets started calls faster
    /// than the server allows (`GRPCServerSession.takeReadHold`): until when (monotonic
    /// nanoseconds); `Server.tick` lets it read again then.
    var readsHeldUntil: UInt64?
    /// True while whole lean frames wait in `decoder` for a later pass of the loop
    /// (`Server.maxFramesPerPass`): no more is read until they are handled.
    var framesDeferred = false
    /// True once a lean frame of this connection was dispatched: an HTTP/1 request line can
    /// only be a foreign peer's first bytes (`Server.rejectOversizedFrame`).
    var hasDispatchedFrame = false
    /// The first bytes of a TLS connection that waits for a handshake slot
    /// (`--tls-max-handshakes`): its reads are held until `Server.admitWaitingHandshakes`.
    var tlsWaitingBytes: [UInt8]?
    /// The lengths a TLS client's records and ClientHellos claim, followed until its handshake
    /// completes, for the size check in `Server.checkClientHelloSize`.
    var handshakeSizes = TLSHandshakeSizes()
    /// Set when the server serves no call on this connection, only answers each with `error`
    /// (an h2c client of a `--tls-only` server: `Server.refuseCleartext`); `since`, monotonic,
    /// starts the handshake timeout within which the connection is ended.
    var refusal: (error: RPCError, since: UInt64)?
    /// True once the server closed this connection; nothing more happens on it.
    private(set) var isClosed = false
    /// Monotonic time since which unwritten replies have waited without a byte
    /// going out; nil while nothing waits.
    private(set) var writeBlockedSince: UInt64?
    /// Replies waiting to be written (on TLS: to be sealed into `tls.ciphertext`).
    private var output = OutputBuffer()
    private var interest: IOEvents = .readable
    /// Monotonic time of the last byte read or reply written.
    var lastActivity: UInt64
    /// Monotonic time of the last byte read: what shows the client is there (`Server.keepaliveVerdict`).
    var lastRead: UInt64
    /// When the server sent its keepalive PING, until anything is read after it.
    var keepalivePingSentAt: UInt64?
    /// Monotonic time when the first byte of a still-incomplete frame arrived.
    var partialFrameSince: UInt64?
    /// Since when the connection has held input it must complete within `--frame-timeout`:
    /// a partial frame, or over TLS a partial record (whichever began first); nil when neither.
    var partialInputSince: UInt64? {
        guard let since = tls?.partialRecordSince else { return partialFrameSince }
        return min(since, partialFrameSince ?? since)
    }
    /// True when what `partialInputSince` times is a TLS record rather than a frame.
    var partialInputIsTLSRecord: Bool {
        guard let since = tls?.partialRecordSince else { return false }
        return since < (partialFrameSince ?? .max)
    }
    /// Restarts the `--frame-timeout` timers at `now` (the server itself stopped reading).
    func restartPartialInputTimers(now: UInt64) {
        partialFrameSince = partialFrameSince.map { _ in now }
        tls?.partialRecordSince = tls?.partialRecordSince.map { _ in now }
    }
    /// True while reading is paused because too many reply bytes are buffered.
    private(set) var readPaused = false

    init(id: UInt64, fd: Int32, peer: SocketAddress, server: Server, maxFrameBytes: Int, budget: MemoryBudget,
         tlsAvailable: Bool = false) {
        self.securityDecided = !tlsAvailable
        self.id = id
        self.usage = ConnectionUsage(budget: budget)
        self.fd = fd
        self.peer = peer
        self.server = server
        self.decoder = FrameDecoder(maxFrameSize: maxFrameBytes)
        self.lastActivity = MonotonicClock.nanoseconds()
        self.lastRead = lastActivity
    }

    /// Reply bytes not yet written: plaintext, and on TLS also the ciphertext made of it.
    var bufferedOutputBytes: Int { output.unwrittenCount + (tls?.ciphertext.unwrittenCount ?? 0) }

    var unsentReplyBytes: Int { bufferedOutputBytes + (http2?.heldOutputBytes ?? 0) }

    var isClosing: Bool {
        if case .closing = state { return true }
        return false
    }

    /// True while the peer has sent no byte since it connected (`lastActivity` is then when
    /// it did): the first byte picks TLS or cleartext and the protocol, leaving one of these set.
    var hasSentNothing: Bool {
        sniffing && sniffBuffer.isEmpty && tls == nil && tlsWaitingBytes == nil && http2 == nil && !isClosing
    }

    func handle(_ events: IOEvents) {
        if events.contains(.writable) {
            let wasPaused = readPaused
            // Replies delivered while output was waiting went into the HTTP/2 session only
            // (`deliver`): they join the output now, or would wait for the peer's next bytes.
            if http2 != nil { server.pumpHTTP2(self) }
            flush()
            // Reading resumed: frames read before the pause may already be whole in the decoder,
            // and no more bytes need come for them (a peer that pipelined its calls and then
            // only reads); they are handled now, not left for the frame timeout.
            if wasPaused && !readPaused && !isClosed && !isClosing && http2 == nil && decoder.bufferedByteCount > 0 {
                server.processBufferedFrames(of: self)
            }
        }
        if events.contains(.readable) || events.contains(.hangup) { server.connectionReadable(self) }
        // Hung up or failed, and still open after the read (which closes on an error or on end
        // of stream with nothing in flight): no reply can reach the peer, and epoll would report
        // this on every turn, so the connection closes now; its calls in flight end unanswered.
        if !events.isDisjoint(with: .failed) && !isClosed {
            server.close(self, reason: "the peer is gone (socket hung up); calls in flight: \(callsInFlight)")
        }
    }

    /// Counts the decoder's buffer, partial frame included, in the memory budget.
    func accountInput() {
        guard !isClosed else { return }
        let buffered = decoder.bufferedByteCount
        usage.add(buffered - accountedInput)
        accountedInput = buffered
    }

    /// Drops a frame begun and never to be completed (the peer ended its input), and its bytes
    /// from the budget; whole frames before it stay, for their pass.
    func dropPartialFrame() {
        guard decoder.bufferedByteCount > 0 else { return }
        decoder.discardPartialFrame()
        accountInput()
    }

    /// Gives this connection's bytes back to the budget (it is closing).
    func releaseBudget() {
        usage.release(bufferedOutputBytes + accountedInput + (http2?.accountedSessionBytes ?? 0))
        accountedInput = 0
        isClosed = true
    }

    /// Queues framed reply bytes; written by the next `flush()`. Dropped once the connection
    /// closed: its bytes left the budget then, and none may enter it again.
    func enqueue(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        usage.add(bytes.count)
        output.append(bytes)
    }

    /// Lets `body` append bytes to the output (written by the next `flush()`), counted in the
    /// budget like `enqueue`'s, without a buffer of their own.
    func appendOutput<E: Error>(_ body: (inout OutputBuffer) throws(E) -> Void) throws(E) {
        guard !isClosed else { return }
        let before = output.unwrittenCount
        defer { usage.add(output.unwrittenCount - before) }
        try body(&output)
    }

    /// Frames a reply straight into the output buffer; written by the next `flush()`.
    /// Returns the frame's size.
    func appendReply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: Int, refusal: RPCError?) {
        guard !isClosed else { return (0, nil) }
        if let http2 {
            // Framed by the pump that follows the events being handled (`Server.receiveHTTP2`):
            // one nghttp2 send for all the calls a read brought.
            return (http2.answer(callID: callID, result: result), nil)
        }
        var refusal: RPCError?
        let added = output.append(reserving: ResponseFrame.maximumSize(of: result)) {
            refusal = ResponseFrame.append(callID: callID, result: result, to: &$0)
        }
        usage.add(added)
        return (added, refusal)
    }

    /// A frame `LeanReplyEncoder` made on a store thread.
    func deliver(_ bytes: [UInt8], callID: UInt64, isFinal: Bool) {
        // Output already waiting is written when the socket turns writable.
        if bufferedOutputBytes == 0 { flushOnDelivery = true }
        if let http2 {
            server.deliverHTTP2(bytes, callID: callID, isFinal: isFinal, on: self, link: http2)
        } else {
            enqueue(bytes)
        }
    }

    /// Writes the delivered replies; reading may have paused on a full output buffer.
    func repliesDelivered() {
        guard flushOnDelivery else { return }
        flushOnDelivery = false
        guard !isClosed else { return }
        if http2 != nil { server.pumpHTTP2(self) }
        flush()
        if !isClosed && !readPaused && decoder.bufferedByteCount > 0 { server.processFrames(of: self) }
    }

    /// Writes answers made outside a read of this connection (see `CallConnection.flushAnswers`).
    func flushAnswers() {
        guard !isClosed else { return }
        if http2 != nil { server.pumpHTTP2(self) }
        let wasPaused = readPaused
        flush()
        // This write may have resumed reading: frames already whole in the decoder are handled
        // now (as in `handle`), since no writable event need come (the output may be empty).
        if wasPaused && !readPaused && !isClosed && !isClosing && http2 == nil && decoder.bufferedByteCount > 0 {
            server.processBufferedFrames(of: self)
        }
    }

    /// Writes what the socket takes now; watches for writability if some is left.
    func flush() {
        writeOutput()
        // Calls waiting for the client to read may run now: looked at once the bytes written
        // have left the budget (in `write`'s defer), or they might wait for the next tick.
        if !isClosed && usage.hasParkedCalls { server.core.resumeParkedCalls(on: self) }
    }

    private func writeOutput() {
        guard !isClosed else { return }
        var written = 0
        defer { usage.remove(written) }
        do throws(SystemError) {
            if let tls {
                guard seal(into: tls) else { return }
                try write(&tls.ciphertext, counting: &written)
            } else {
                try write(&output, counting: &written)
            }
        } catch {
            // Closed only now: closing reads the output buffers `write` holds inout.
            server.close(self, reason: "write failed: \(error)")
            return
        }
        if bufferedOutputBytes == 0 {
            writeBlockedSince = nil
            if case .closing = state {
                shutdown(fd, Int32(SHUT_WR))
            }
        } else if written > 0 {
            writeBlockedSince = lastActivity  // just now
        } else if writeBlockedSince == nil {
            writeBlockedSince = MonotonicClock.nanoseconds()
        }
        updateInterest()
        if bufferedOutputBytes == 0 { server.outputDrained(self) }
    }

    /// Writes `buffer` until the socket would block.
    /// - Throws: the socket's error; the caller closes the connection (after its inout access ends).
    private func write(_ buffer: inout OutputBuffer, counting written: inout Int) throws(SystemError) {
        while !buffer.isEmpty {
            let outcome = try buffer.withUnwrittenBytes { bytes throws(SystemError) in try SocketIO.write(fd, bytes) }
            guard case .transferred(let count) = outcome else { break }
            buffer.consume(count)
            written += count
            server.metrics.sent(count)
            lastActivity = MonotonicClock.nanoseconds()
        }
    }

    /// Encrypts the plaintext output into `tls.ciphertext` (after the handshake), and takes
    /// what the session has to send; the budget counts ciphertext instead of plaintext.
    /// False when the session failed and the connection is closed.
    private func seal(into tls: TLSLink) -> Bool {
        let plain = output.unwrittenCount
        if plain > 0 && !tls.session.isHandshakeComplete {
            // Only an error frame (a timeout) can be queued before the handshake, and it can
            // never be sent: drop it, or the socket would be watched for writing forever.
            output.removeAll()
            usage.remove(plain)
        } else if plain > 0 {
            do throws(TLSError) {
                // Chunk by chunk, each chunk's records taken at once: OpenSSL's output buffer
                // keeps the capacity of the most it ever held, for the life of the connection.
                // Each chunk's plaintext leaves the budget as its ciphertext enters it, so the
                // two are never counted together (store threads read the count meanwhile).
                try output.drain { bytes throws(TLSError) in
                    try tls.session.send(bytes)
                    usage.remove(bytes.count)
                    takeCiphertext(from: tls)
                }
            } catch {
                server.close(self, reason: "TLS write failed: \(error)")
                return false
            }
        }
        if isClosing && !tls.closeNotified && tls.session.isHandshakeComplete && output.isEmpty {
            tls.closeNotified = true
            tls.session.close()
        }
        takeCiphertext(from: tls)
        return true
    }

    /// Moves what the TLS session has to send into `tls.ciphertext`, counted in the budget.
    private func takeCiphertext(from tls: TLSLink) {
        let pending = tls.session.pendingOutputBytes
        guard pending > 0 else { return }
        usage.add(tls.ciphertext.append(reserving: pending) { tls.session.takeOutput(into: &$0) })
    }

    /// On a normal close of a TLS connection (the peer finished, the server stopped): queues
    /// close_notify after the ciphertext still unwritten and writes what the socket takes now,
    /// once, without waiting (the close follows at once). Nothing when the handshake did not
    /// complete, the session failed, close_notify was already queued, or plaintext is still
    /// unsealed (it would be lost: the peer must not read that as a clean end).
    func sendCloseNotify() {
        guard let tls, !isClosed, !tls.closeNotified, tls.session.isHandshakeComplete, tls.session.failure == nil,
              output.isEmpty else { return }
        tls.closeNotified = true
        tls.session.close()
        takeCiphertext(from: tls)
        var written = 0
        // A failed write changes nothing: the connection is being closed anyway.
        try? write(&tls.ciphertext, counting: &written)
        usage.remove(written)
    }

    /// Stops or resumes reading according to the output backlog.
    func updateInterest() {
        let limit = server.configuration.maxBufferedOutputBytes
        if !readPaused && bufferedOutputBytes > limit {
            readPaused = true
        } else if readPaused && bufferedOutputBytes <= limit / 2 {
            readPaused = false
        }
        var wanted: IOEvents = []
        if !readPaused && !heldForBudget && readsHeldUntil == nil && tlsWaitingBytes == nil && !inputClosed {
            wanted.insert(.readable)
        }
        if bufferedOutputBytes > 0 { wanted.insert(.writable) }
        if wanted != interest {
            interest = wanted
            try? server.loop.modify(fd, for: wanted)
        }
    }
}
