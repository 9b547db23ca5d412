import CLarderProto
import LarderAPI
import LarderHTTP2
import LarderReactor
import LarderStore
import LarderSystem
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// Reading frames, decoding envelopes, admitting and starting calls.
extension Server {

    func connectionReadable(_ connection: Connection) {
        // The calls of every frame read now reach the store threads with one wake-up.
        store.submitBatch { readFrames(from: connection) }
    }

    private func readFrames(from connection: Connection) {
        // Once the loop is to stop, at the end of this turn, nothing more is read: what is read
        // now could not be answered (review 33 M2); bytes left unread are dropped at the close.
        if stopped { return }
        // Bounded: a peer that keeps sending cannot starve the others.
        for _ in 0..<8 {
            if connection.inputClosed || connection.isClosed || connection.framesDeferred || connection.readsHeldUntil != nil {
                return
            }
            if !connection.isClosing && connection.usage.mustHoldInput {
                // The budget is used up and this connection holds more than its share:
                // its bytes wait in the kernel until `tick` finds room again.
                connection.heldForBudget = true
                connection.updateInterest()
                return
            }
            // A connection's first read, which may be a ClientHello left waiting for a handshake
            // slot with what it read, takes at most one TLS record.
            let readLimit = connection.securityDecided ? readBuffer.count : min(readBuffer.count, Self.maxTLSRecordBytes)
            let outcome: SocketIO.Outcome
            do {
                outcome = try readBuffer.withUnsafeMutableBytes { raw throws(SystemError) in
                    try SocketIO.read(connection.fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<readLimit]))
                }
            } catch {
                close(connection, reason: "read failed: \(error)")
                return
            }
            switch outcome {
            case .endOfStream:
                peerFinishedSending(connection)
                return
            case .wouldBlock:
                return
            case .transferred(let count):
                connection.lastActivity = MonotonicClock.nanoseconds()
                connection.lastRead = connection.lastActivity
                metrics.received(count)
                if connection.isClosing { continue }  // discard what a failed peer still sends
                readBuffer.withUnsafeBytes { receiveBytes(UnsafeRawBufferPointer(rebasing: $0[0..<count]), on: connection) }
                connection.flush()
                if connection.readPaused || connection.isClosing || connection.isClosed { return }
                if connection.tlsWaitingBytes != nil { return }  // waits for a handshake slot, unread
                if count < readLimit { return }
            }
        }
    }

    /// The peer sent all it will (end of stream, or TLS close_notify): the unary calls in flight
    /// are answered if it still reads (a half-close), its streaming calls end CANCELLED (nothing
    /// else would end a health watch), and `outputDrained` closes after the last reply; with
    /// nothing in flight the connection closes now.
    func peerFinishedSending(_ connection: Connection) {
        // Whole frames still waiting for their pass (TLS: close_notify came in the same read)
        // are requests like any other: handled now, all of them; only a trailing partial frame
        // is dropped (below).
        if connection.http2 == nil && !connection.isClosing && connection.decoder.bufferedByteCount > 0 {
            processFrames(of: connection, atMost: .max)
            guard !connection.isClosed else { return }
        }
        if !connection.isClosing && (connection.callsInFlight > 0 || connection.bufferedOutputBytes > 0) {
            connection.inputClosed = true
            connection.partialFrameSince = nil
            core.endStreams(on: connection, RPCError(.cancelled,
                "the client ended its connection (end of stream) while the stream was open"))
            // Requests begun and never finished never will be: their bytes go, or they would hold
            // the budget, and the calls waiting for the connection to have room, for ever.
            if let link = connection.http2 {
                if link.session.endOfInput() > 0 { pumpHTTP2(connection) }
            } else {
                connection.dropPartialFrame()
            }
            connection.flush()  // also runs the calls that waited for room, if there is now
            guard !connection.isClosed else { return }
            connection.updateInterest()
            logger.debug("peer_half_closed", ["conn": connection.id, "calls_in_flight": connection.callsInFlight])
            return
        }
        close(connection, reason: connection.isClosing ? "closed after error" : "peer closed",
              notifyPeer: !connection.isClosing)
    }

    /// Plaintext read from a connection (decrypted, on TLS): the first bytes pick the
    /// protocol (the HTTP/2 preface or a lean frame), the rest goes to its transport.
    func receivePlaintext(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        if connection.http2 != nil {
            receiveHTTP2(bytes, on: connection)
            return
        }
        if connection.sniffing {
            connection.sniffBuffer.append(contentsOf: bytes)
            guard sniffProtocol(of: connection) else {
                // A first frame or preface begun and not finished: the frame timeout runs.
                if connection.partialFrameSince == nil { connection.partialFrameSince = connection.lastActivity }
                return
            }
            guard connection.http2 == nil else { return }
        } else {
            connection.decoder.append(bytes)
        }
        processFrames(of: connection)
    }

    /// Handles the whole frames a connection's decoder already holds (reading resumed after its
    /// output cap paused it), their calls reaching the store threads with one wake-up.
    func processBufferedFrames(of connection: Connection) {
        store.submitBatch { processFrames(of: connection) }
        // What they answered on the loop is written now, as after a read.
        connection.flush()
    }

    /// Whole lean frames one connection has handled in one pass before the others' turn: what
    /// is left waits in its decoder, and no more is read from it, until a task the loop runs
    /// after the other connections' events (`resumeDeferredFrames`). Calls answered on the loop
    /// (health, reflection, admin) are cheap but not free: one read after another of pipelined
    /// health checks (8 reads of 64 KiB, about 13,800 calls) held the loop for tens of
    /// milliseconds, and 200 such peers held it for seconds (audit 33).
    static let maxFramesPerPass = 64

    /// Handles the whole frames in `connection`'s decoder, `atMost` of them in this pass (the
    /// rest later, `deferFrames`).
    func processFrames(of connection: Connection, atMost: Int = maxFramesPerPass) {
        // Nor is a call started that the stopping loop could not answer (a write the store
        // might apply, unanswered).
        if stopped { return }
        var completedFrame = false
        var handledFrames = 0
        // A flush below may close the connection (a failed write): nothing more happens on it.
        while !connection.isClosed && !connection.isClosing && !connection.readPaused {
            if handledFrames == atMost {
                deferFrames(of: connection)
                break
            }
            do throws(FrameDecoder.Failure) {
                let handled: Void? = try connection.decoder.withNextFrame { body in dispatch(body, from: connection) }
                if handled == nil { break }
                completedFrame = true
                handledFrames += 1
                // Replies answered on the loop (errors, health) count against the output cap too.
                if connection.bufferedOutputBytes > configuration.maxBufferedOutputBytes { connection.flush() }
            } catch {
                switch error {
                case .frameTooLarge(let length, let limit): rejectOversizedFrame(on: connection, length: length, limit: limit)
                }
                return
            }
        }
        guard !connection.isClosed else { return }
        connection.accountInput()
        // A frame completed, so what is left began arriving just now: a peer that pipelines
        // without pause (every read ending mid-frame) is not a slow one.
        connection.partialFrameSince = connection.decoder.bufferedByteCount == 0 ? nil
            : completedFrame ? MonotonicClock.nanoseconds() : (connection.partialFrameSince ?? MonotonicClock.nanoseconds())
    }

    /// Leaves the frames still in `connection`'s decoder for a task of the loop, once.
    private func deferFrames(of connection: Connection) {
        guard !connection.framesDeferred else { return }
        connection.framesDeferred = true
        let id = connection.id
        loop.execute { [self] in resumeDeferredFrames(ofConnection: id) }
    }

    /// Handles frames `deferFrames` left (up to another pass), then lets reading go on.
    private func resumeDeferredFrames(ofConnection id: UInt64) {
        guard let connection = connections[id], connection.framesDeferred else { return }
        connection.framesDeferred = false
        guard !connection.isClosed else { return }
        processBufferedFrames(of: connection)
    }

    func rejectOversizedFrame(on connection: Connection, length: UInt32, limit: Int) {
        let peerKind = PeerSniffer.describe(prefix: connection.decoder.bufferedPrefix)
        let message = peerKind.map { "not a Larder peer (\($0)): frame length \(length) exceeds the maximum of \(limit) bytes" }
            ?? "frame length \(length) exceeds the maximum of \(limit) bytes"
        logger.warn("frame_rejected", ["conn": connection.id, "peer": connection.peer, "reason": message])
        if peerKind == PeerSniffer.httpRequest && !connection.hasDispatchedFrame {
            connection.enqueue(PeerSniffer.http1Refusal)
            connection.state = .closing(since: MonotonicClock.nanoseconds())
            connection.flush()
            return
        }
        fail(connection, RPCError(.resourceExhausted, message))
    }

    /// Decodes one request envelope and starts its call in the core.
    ///
    /// The envelope is unpacked in the core's `scratch` and read in place:
    /// the payload is decoded by the handler before this returns, and a method
    /// name is looked up by its bytes, becoming a `String` only when unknown.
    func dispatch(_ body: UnsafeRawBufferPointer, from connection: Connection) {
        connection.hasDispatchedFrame = true
        let summary = DecodeLimitScan.envelopeSummary(body, limits: .server)
        if summary.metadataBytes > DecodeLimits.server.maxMetadataBytes {
            refuseEnvelope(RPCError(.resourceExhausted, "request metadata of at least \(summary.metadataBytes) bytes exceeds the "
                + "limit of \(DecodeLimits.server.maxMetadataBytes) (each entry counts its key and value bytes plus 32)"),
                callID: summary.callID, frameBytes: Frame.headerSize + body.count, on: connection)
            return
        }
        do {
            try core.scratch.unpack.withUnpacked(RequestEnvelope.descriptor, from: body) { message throws(RPCError) in
                let envelope = message.cast(to: Larder__Rpc__V1__RequestEnvelope.self)
                let method = try core.resolveMethod(envelope.pointee.method)
                let metadata = try RequestEnvelope.metadata(of: envelope.pointee)
                start(envelope.pointee, method: method, metadata: metadata, frameBytes: Frame.headerSize + body.count,
                      on: connection)
            }
        } catch where error.code == .resourceExhausted {
            refuseEnvelope(error, callID: summary.callID, frameBytes: Frame.headerSize + body.count, on: connection)
        } catch {
            logger.warn("envelope_rejected", ["conn": connection.id, "peer": connection.peer, "reason": error.message])
            fail(connection, RPCError.invalidArgument("malformed request envelope: \(error.message)"))
        }
    }

    /// An envelope over `DecodeLimits.server`: its call alone gets the error when its call
    /// id could be read (the framing is intact), else the connection does.
    private func refuseEnvelope(_ error: RPCError, callID: UInt64, frameBytes: Int, on connection: Connection) {
        logger.warn("envelope_rejected", ["conn": connection.id, "peer": connection.peer, "call": callID,
                                          "reason": error.message])
        guard callID != 0 else {
            fail(connection, error)
            return
        }
        // The method is unknown (the envelope was not decoded): counted as an unknown method.
        let context = CallContext(connectionID: connection.id, callID: callID, method: "", metadata: [:], deadline: nil,
                                  receivedAt: connection.lastActivity, peer: connection.peer, requestBytes: frameBytes,
                                  usage: connection.usage, clientCertificate: connection.clientCertificate)
        core.refuse(error, context, on: connection)
    }

    /// The lean protocol's part of starting a call: call id 0 is a connection error, and
    /// `timeout_ms` counts from the read that brought the frame; the rest is the core's.
    private func start(_ envelope: Larder__Rpc__V1__RequestEnvelope, method: ResolvedMethod,
                       metadata: [String: String], frameBytes: Int, on connection: Connection) {
        guard envelope.call_id != 0 else {
            logger.warn("envelope_rejected", ["conn": connection.id, "peer": connection.peer,
                                              "reason": "call_id must be non-zero"])
            fail(connection, RPCError.invalidArgument("call_id must be non-zero"))
            return
        }
        // The time of the read that brought this frame (or of a later write): one clock
        // reading per read serves all the calls it brought.
        let now = connection.lastActivity
        let call = IncomingCall(
            method: method, callID: envelope.call_id, metadata: CallMetadata(metadata),
            deadline: envelope.timeout_ms > 0 ? now + UInt64(envelope.timeout_ms) * 1_000_000 : nil,
            receivedAt: now, requestBytes: frameBytes,
            payload: UnsafeRawBufferPointer(start: envelope.payload.data, count: envelope.payload.len))
        core.start(call, on: connection)
    }
}
