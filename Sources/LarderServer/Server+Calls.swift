import CLarderProto
import LarderAPI
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
        // Bounded: a peer that keeps sending cannot starve the others.
        for _ in 0..<8 {
            if connection.inputClosed || connection.isClosed { return }
            if !connection.isClosing && connection.usage.mustHoldInput {
                // The budget is used up and this connection holds more than its share:
                // its bytes wait in the kernel until `tick` finds room again.
                connection.heldForBudget = true
                connection.updateInterest()
                return
            }
            let outcome: SocketIO.Outcome
            do {
                outcome = try readBuffer.withUnsafeMutableBytes { raw throws(SystemError) in
                    try SocketIO.read(connection.fd, into: raw)
                }
            } catch {
                close(connection, reason: "read failed: \(error)")
                return
            }
            switch outcome {
            case .endOfStream:
                if !connection.isClosing && (connection.callsInFlight > 0 || connection.bufferedOutputBytes > 0) {
                    // A half-close: the peer sent all it will, but still reads. Answer the
                    // calls in flight; `outputDrained` closes after the last reply.
                    connection.inputClosed = true
                    connection.partialFrameSince = nil
                    connection.updateInterest()
                    logger.debug("peer_half_closed", ["conn": connection.id, "calls_in_flight": connection.callsInFlight])
                    return
                }
                close(connection, reason: connection.isClosing ? "closed after error" : "peer closed")
                return
            case .wouldBlock:
                return
            case .transferred(let count):
                connection.lastActivity = MonotonicClock.nanoseconds()
                metrics.received(count)
                if connection.isClosing { continue }  // discard what a failed peer still sends
                readBuffer.withUnsafeBytes { connection.decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                processFrames(of: connection)
                connection.flush()
                if connection.readPaused || connection.isClosing || connection.isClosed { return }
                if count < readBuffer.count { return }
            }
        }
    }

    func processFrames(of connection: Connection) {
        var completedFrame = false
        while !connection.isClosing && !connection.readPaused {
            do {
                let handled: Void? = try connection.decoder.withNextFrame { body in dispatch(body, from: connection) }
                if handled == nil { break }
                completedFrame = true
                // Replies answered on the loop (errors, health) count against the output cap too.
                if connection.bufferedOutputBytes > configuration.maxBufferedOutputBytes { connection.flush() }
            } catch let FrameDecoder.Failure.frameTooLarge(length, limit) {
                rejectOversizedFrame(on: connection, length: length, limit: limit)
                return
            } catch {
                fail(connection, RPCError.internalError("unexpected framing error"))
                return
            }
        }
        connection.accountInput()
        // A frame completed, so what is left began arriving just now: a peer that pipelines
        // without pause (every read ending mid-frame) is not a slow one.
        connection.partialFrameSince = connection.decoder.bufferedByteCount == 0 ? nil
            : completedFrame ? MonotonicClock.nanoseconds() : (connection.partialFrameSince ?? MonotonicClock.nanoseconds())
    }

    func rejectOversizedFrame(on connection: Connection, length: UInt32, limit: Int) {
        let peerKind = PeerSniffer.describe(prefix: connection.decoder.bufferedPrefix)
        let message = peerKind.map { "not a Larder peer (\($0)): frame length \(length) exceeds the maximum of \(limit) bytes" }
            ?? "frame length \(length) exceeds the maximum of \(limit) bytes"
        logger.warn("frame_rejected", ["conn": connection.id, "peer": connection.peer, "reason": message])
        fail(connection, RPCError(.resourceExhausted, message))
    }

    /// Decodes one request envelope and starts its call.
    ///
    /// The envelope is unpacked in the loop's `scratch` and read in place:
    /// the payload is decoded by the handler before this returns, and a method
    /// name is looked up by its bytes, becoming a `String` only when unknown.
    func dispatch(_ body: UnsafeRawBufferPointer, from connection: Connection) {
        let summary = DecodeLimitScan.envelopeSummary(body, limits: .server)
        if summary.metadataBytes > DecodeLimits.server.maxMetadataBytes {
            refuseEnvelope(RPCError(.resourceExhausted, "request metadata of \(summary.metadataBytes) bytes exceeds the "
                + "limit of \(DecodeLimits.server.maxMetadataBytes) (each entry counts its key and value bytes plus 32)"),
                callID: summary.callID, frameBytes: Frame.headerSize + body.count, on: connection)
            return
        }
        do {
            try scratch.unpack.withUnpacked(RequestEnvelope.descriptor, from: body) { message throws(RPCError) in
                let envelope = message.cast(to: Larder__Rpc__V1__RequestEnvelope.self)
                let method = try resolveMethod(envelope.pointee.method)
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
                                  usage: connection.usage)
        refuse(error, context, on: connection)
    }

    /// A method name from an envelope: its handler when it names one, else the name itself.
    enum ResolvedMethod {
        case known(MethodHandler)
        case unknown(String)

        var path: String {
            switch self {
            case .known(let handler): handler.path
            case .unknown(let path): path
            }
        }
    }

    private func resolveMethod(_ name: UnsafePointer<CChar>?) throws(RPCError) -> ResolvedMethod {
        if let name, let handler = router.handler(for: name) { return .known(handler) }
        return .unknown(try CFields.string(name, field: "method"))
    }

    private func start(_ envelope: Larder__Rpc__V1__RequestEnvelope, method: ResolvedMethod,
                       metadata: [String: String], frameBytes: Int, on connection: Connection) {
        let callID = envelope.call_id
        guard callID != 0 else {
            fail(connection, RPCError.invalidArgument("call_id must be non-zero"))
            return
        }
        let handler: MethodHandler?
        if case .known(let known) = method { handler = known } else { handler = nil }
        metrics.started(method: handler?.metricsIndex ?? metrics.index(of: method.path))
        // The time of the read that brought this frame (or of a later write): one clock
        // reading per read serves all the calls it brought.
        let now = connection.lastActivity
        let context = CallContext(
            connectionID: connection.id, callID: callID, method: method.path, metadata: metadata,
            deadline: envelope.timeout_ms > 0 ? now + UInt64(envelope.timeout_ms) * 1_000_000 : nil,
            receivedAt: now, peer: connection.peer, requestBytes: frameBytes, usage: connection.usage)
        if connection.callIDsInFlight.contains(callID) {
            refuse(RPCError.invalidArgument(
                "call_id \(callID) is already in flight on this connection; use an id unique among your calls in flight"),
                   context, on: connection)
            return
        }
        if let error = admissionError(for: method, on: connection) {
            refuse(error, context, on: connection)
            return
        }
        if let token, handler?.isPublic != true, !token.accepts(metadata["authorization"]) {
            let error = RPCError(.unauthenticated, metadata["authorization"] == nil
                ? "this server requires a bearer token: send metadata authorization: Bearer <token>"
                : "invalid bearer token")
            logger.warn("unauthenticated", ["conn": connection.id, "call": callID, "peer": connection.peer,
                                            "method": method.path, "reason": error.message])
            refuse(error, context, on: connection)
            return
        }
        guard let handler else {
            refuse(RPCError(.unimplemented, "unknown method \"\(method.path)\""), context, on: connection)
            return
        }
        let payload = UnsafeRawBufferPointer(start: envelope.payload.data, count: envelope.payload.len)
        let methodIndex = handler.metricsIndex
        switch handler.execution {
        case .inline(let answer):
            // Already on the loop: straight into the connection's output, no hand-off.
            // Counted in flight while it runs, so a metrics snapshot includes itself.
            callsInFlight += 1
            let error = answer(payload, scratch, context)
            callsInFlight -= 1
            let result: Result<[UInt8], RPCError> = error.map { .failure($0) } ?? .success(scratch.reply)
            logIfInternal(result, context)
            answerNow(result, context, methodIndex: methodIndex, on: connection)
        case .deferred(let start):
            let refused = start(payload, scratch, context) { [self] result in
                logIfInternal(result, context)
                let frame = ResponseFrame.encode(callID: context.callID, result: result)
                reply(frame, to: context.connectionID, usage: context.usage,
                      finished: FinishedCall(context, methodIndex: methodIndex, code: result.statusCode,
                                             message: result.statusMessage, replyBytes: frame.count))
            }
            if let refused {
                // A request the handler could not decode: answered here, like an inline call.
                answerNow(.failure(refused), context, methodIndex: methodIndex, on: connection)
            } else {
                // Counted only now: replies are delivered on this thread, never before this returns.
                connection.callsInFlight += 1
                connection.callIDsInFlight.insert(callID)
                callsInFlight += 1
            }
        }
    }

    /// Puts a call's reply straight into its connection's output and counts it finished.
    private func answerNow(_ result: Result<[UInt8], RPCError>, _ context: CallContext, methodIndex: Int,
                           on connection: Connection, method: String? = nil) {
        let before = connection.bufferedOutputBytes
        connection.appendReply(callID: context.callID, result: result)
        finished(FinishedCall(context, methodIndex: methodIndex, code: result.statusCode, message: result.statusMessage,
                              replyBytes: connection.bufferedOutputBytes - before),
                 connectionID: context.connectionID, now: MonotonicClock.nanoseconds(), method: method)
    }

    /// INTERNAL means a bug or a database failure: worth an error line with the call's ids.
    func logIfInternal(_ result: Result<[UInt8], RPCError>, _ context: CallContext) {
        if case .failure(let error) = result, error.code == .internal {
            logger.error("call_failed", ["conn": context.connectionID, "call": context.callID,
                                         "method": context.method, "status": error.code.name, "error": error.message])
        }
    }

    /// Why a call may not start now, if it may not.
    ///
    /// Calls answered on the loop (health, reflection, admin) hold nothing after they
    /// are answered: neither the per-connection call limit nor the memory budget refuses them.
    func admissionError(for method: ResolvedMethod, on connection: Connection) -> RPCError? {
        // Health checks still run while draining, so connected clients see NOT_SERVING.
        if drainDeadline != nil && method.path != HealthMethods.check.path {
            return RPCError.unavailable("server is shutting down")
        }
        guard case .known(let handler) = method, case .deferred = handler.execution else { return nil }
        if connection.callsInFlight >= configuration.maxCallsPerConnection {
            return RPCError(.resourceExhausted,
                            "too many calls in flight on this connection (limit \(configuration.maxCallsPerConnection))")
        }
        return connection.usage.admissionError()
    }

    /// Answers a call with `error` on the loop, without reaching its handler; counts and access-logs it.
    func refuse(_ error: RPCError, _ context: CallContext, on connection: Connection) {
        answerNow(.failure(error), context, methodIndex: metrics.index(of: context.method), on: connection,
                  method: context.method)
    }

    /// Counts a finished call in the metrics and writes its access-log line (with
    /// `method` as the client sent it, when given: unknown names are counted as `unknown`).
    func finished(_ call: FinishedCall, connectionID: UInt64, now: UInt64, method: String? = nil) {
        let nanoseconds = now &- call.receivedAt
        metrics.record(method: call.methodIndex, code: call.code, nanoseconds: nanoseconds)
        guard configuration.accessLog else { return }
        let path = method ?? metrics.methodPaths[call.methodIndex]
        if call.message.isEmpty {
            logger.info("call", ["conn": connectionID, "call": call.callID, "peer": call.peer, "method": path,
                                 "status": call.code.name, "duration_us": nanoseconds / 1000,
                                 "bytes_in": call.requestBytes, "bytes_out": call.replyBytes])
        } else {
            logger.info("call", ["conn": connectionID, "call": call.callID, "peer": call.peer, "method": path,
                                 "status": call.code.name, "message": call.message, "duration_us": nanoseconds / 1000,
                                 "bytes_in": call.requestBytes, "bytes_out": call.replyBytes])
        }
    }

}
