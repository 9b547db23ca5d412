#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderSystem
import LarderTLS
import LarderWire

/// One TCP connection with many calls in flight.
///
/// Callers register a continuation under a fresh call id and queue their request
/// frame, writing what the socket takes at once; no caller ever blocks on the socket
/// (a server that stops reading must not hold the caller's thread, a cooperative one,
/// past its deadline). One reader thread writes the rest as the socket drains, decodes
/// reply frames and resumes the matching continuation, expires calls at their deadline
/// (its poll() timeout is the nearest deadline), dropping their frames not yet begun, and
/// fails every pending call when the connection ends. The descriptors stay open until
/// deinit, so a racing `shutdown` or `wake` never touches a reused descriptor.
final class Connection: Sendable {
    let address: ServerAddress
    private let fd: Int32
    private let maxFrameBytes: Int
    private let wakePipe: WakePipe
    private let state = LockedValue(PendingCalls())
    /// Request frames not yet written.
    private let output = LockedValue(OutboundQueue())
    /// The TLS session when the connection is TLS; frames are sealed as `output` writes them.
    private let tls: TLSChannel?

    /// Connects (and with `tls`, runs the handshake for `serverName` within `connectTimeout`),
    /// then starts the reader thread. Blocks: call it off the cooperative pool.
    /// - Throws: UNAVAILABLE when the server cannot be reached; RESOURCE_EXHAUSTED when the
    ///   process has no thread left for the reader.
    init(address: ServerAddress, connectTimeout: Duration, maxFrameBytes: Int,
         tls context: TLSClientContext? = nil, serverName: String? = nil,
         resuming ticket: TLSSessionTicket? = nil) throws(RPCError) {
        let wakePipe = try WakePipe()
        let fd = try Socket.connect(to: address, timeout: connectTimeout)
        var early: [UInt8] = []
        if let context {
            do {
                let (channel, plaintext) = try TLSChannel.handshake(fd: fd, context: context,
                                                                    serverName: serverName ?? address.host,
                                                                    address: address, timeout: connectTimeout,
                                                                    resuming: ticket)
                self.tls = channel
                early = plaintext
            } catch {
                SystemCall.close(fd)
                throw error
            }
        } else {
            self.tls = nil
        }
        self.fd = fd
        self.address = address
        self.maxFrameBytes = maxFrameBytes
        self.wakePipe = wakePipe
        // Detached when dropped: the reader ends when the socket is shut down.
        guard SystemThread(startingIfPossible: "larder-client-reader", { [self, early] in self.readLoop(early: early) })
            != nil
        else {
            throw RPCError(.resourceExhausted,
                           "cannot read from \(address): the process has no thread left for the connection's reader")
        }
    }

    deinit {
        SystemCall.close(fd)
    }

    /// Sends one call and waits for its reply payload.
    func call(method: String, payload: [UInt8], timeout: Duration?, metadata: [String: String]) async
        -> Result<[UInt8], RPCError>
    {
        let registered = state.withLock { calls -> Result<UInt64, RPCError> in
            if let failure = calls.failure { return .failure(failure) }
            return .success(calls.makeCallID())
        }
        let id: UInt64
        switch registered {
        case .success(let value): id = value
        case .failure(let error): return .failure(error)
        }
        let envelope = RequestEnvelope(
            callID: id, method: method, payload: payload,
            timeoutMilliseconds: timeout.map { UInt32(clamping: max(1, Int64(Socket.milliseconds($0)))) } ?? 0,
            metadata: metadata)
        let frame = Frame.encode(envelope)
        if frame.count - Frame.headerSize > maxFrameBytes {
            return .failure(RPCError(.resourceExhausted,
                "request to \(method) is \(frame.count - Frame.headerSize) bytes, above the maximum frame size of \(maxFrameBytes) bytes"))
        }
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }

        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: PendingCalls.Continuation) in
                let outcome = state.withLock { calls -> Result<Bool, RPCError> in
                    if let failure = calls.failure { return .failure(failure) }
                    if Task.isCancelled { return .failure(RPCError(.cancelled, "call to \(method) was cancelled")) }
                    calls.insert(.init(continuation: continuation, method: method, timeout: timeout,
                                       deadline: deadline), id: id)
                    guard let deadline else { return .success(false) }
                    return .success(calls.readerWakeDeadline.map { deadline < $0 } ?? true)
                }
                switch outcome {
                case .failure(let error):
                    continuation.resume(returning: .failure(error))
                    return
                case .success(let mustWake):
                    if mustWake { wakePipe.wake() }
                }
                // Written now as far as the socket takes it; the reader thread writes the rest. A
                // queue that was not empty is the reader's already (it watches for POLLOUT). A
                // call cancelled or expired since it registered is not queued at all: its end
                // comes first (`complete`, `expireAndComputeTimeout`) and drops the frame after,
                // so under this lock either it is gone already or its drop is still to come.
                let written = output.withLock { queue -> Result<Bool, RPCError> in
                    guard state.withLock({ $0.markQueued(id) }) else { return .success(true) }
                    let wasEmpty = queue.isEmpty
                    queue.append(frame, callID: id)
                    return wasEmpty ? queue.write(to: fd, tls: tls) : .success(true)
                }
                switch written {
                case .success(true): break
                case .success(false): wakePipe.wake()
                case .failure(let error): failExplained(RPCError(error.code, "cannot send to \(address): \(error.message)"))
                }
            }
        } onCancel: {
            complete(id, with: .failure(RPCError(.cancelled, "call to \(method) was cancelled")))
            output.withLock { $0.drop(callIDs: [id]) }
        }
    }

    /// The TLS session to resume on the next connection (nil in cleartext or before the server sent one).
    var resumptionTicket: TLSSessionTicket? { tls?.resumptionTicket }

    /// Fails every pending call with CANCELLED and closes the connection. Idempotent.
    func close() {
        fail(RPCError(.cancelled, "the client closed the connection to \(address)"))
    }

    /// The number of calls waiting for a reply.
    var pendingCount: Int { state.withLock { $0.count } }

    /// Whether the connection has ended (seen by the reader thread or a failed send).
    var hasFailed: Bool { state.withLock { $0.failure != nil } }

    /// Whether new calls can still be sent. With no call in flight it also checks, without
    /// blocking, whether the server has closed its side (an idle timeout or a restart) before
    /// the reader thread noticed, and ends the connection if so.
    func isUsable() -> Bool {
        let (failed, idle) = state.withLock { ($0.failure != nil, $0.count == 0) }
        if failed { return false }
        guard idle, Socket.peerHasClosed(fd) else { return true }
        fail(RPCError.unavailable("connection to \(address) closed by the server"))
        return false
    }

    /// Resumes call `id` with `result`, unless it has already completed.
    private func complete(_ id: UInt64, with result: Result<[UInt8], RPCError>) {
        let call = state.withLock { $0.remove(id) }
        call?.continuation.resume(returning: result)
    }

    /// Ends the connection: every pending and later call fails with `error`. With
    /// `tellingWhetherSent` (the connection broke or closed under the calls, their outcome
    /// unknown), a pending call's error says whether its request was sent (any of it written:
    /// the server may have applied it) or not (safe to send again), `RPCError.cause` holding the
    /// same as a `RequestDelivery`. Not for what the server or a foreign peer said about the
    /// connection (a call id 0 status, an oversized or undecodable frame).
    private func fail(_ error: RPCError, tellingWhetherSent: Bool = true) {
        // Under the output lock, as a call queues its frame and the reader thread writes: one
        // not queued yet never will be, and the socket is shut before anyone writes again, so
        // a frame found unwritten here stays unwritten (review 33 L2).
        let ended = output.withLock { queue -> (calls: [(id: UInt64, call: PendingCalls.Call)], unwritten: Set<UInt64>)? in
            guard let calls = state.withLock({ $0.fail(error) }) else { return nil }
            Socket.shutdownBoth(fd)
            return (calls, queue.unwrittenCallIDs)
        }
        guard let ended else { return }
        wakePipe.wake()
        for (id, call) in ended.calls {
            guard tellingWhetherSent else {
                call.continuation.resume(returning: .failure(error))
                continue
            }
            let sent = call.queued && !ended.unwritten.contains(id)
            let delivery: RequestDelivery = sent ? .sent : .notSent
            let failure = RPCError(error.code, "\(error.message) (\(delivery.explanation))", cause: delivery)
            call.continuation.resume(returning: .failure(failure))
        }
    }

    /// The error for an oversized reply frame. A frame whose first bytes are another protocol's (printable
    /// text such as "HTTP", or a TLS record header, 0x14-0x17 then 0x03) is from a peer that is no Larder
    /// server: UNAVAILABLE, saying what it sent. Any other oversized frame is RESOURCE_EXHAUSTED.
    static func oversizedFrameError(address: ServerAddress, length: UInt32, limit: Int, prefix: [UInt8]) -> RPCError {
        let message = "\(address) sent a reply frame of \(length) bytes, above the client's limit of \(limit) bytes"
        switch ForeignFramePrefix(prefix) {
        case .text(let text): return RPCError(.unavailable, message + " (it starts with \"\(text)\"; is it a Larder server?)")
        case .tlsRecord: return RPCError(.unavailable, message + " (it starts like a TLS record; does the server want TLS?)")
        case nil: return RPCError(.resourceExhausted, message)
        }
    }

    // MARK: - Reader thread

    private func readLoop(early: [UInt8]) {
        var decoder = FrameDecoder(maxFrameSize: maxFrameBytes)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // Whether the server ever sent a byte (a TLS handshake counts): what a timeout hints at.
        var heardFromServer = tls != nil || !early.isEmpty
        if !early.isEmpty {
            early.withUnsafeBytes { decoder.append($0) }
            if !deliverFrames(&decoder) { return }
        }
        let readable = Int16(truncatingIfNeeded: POLLIN | POLLHUP | POLLERR)
        while true {
            guard let timeout = expireAndComputeTimeout(heardFromServer: heardFromServer) else { return }
            let mustWrite = output.withLock { !$0.isEmpty }
            var fds = [
                pollfd(fd: fd, events: Int16(truncatingIfNeeded: mustWrite ? POLLIN | POLLOUT : POLLIN), revents: 0),
                pollfd(fd: wakePipe.readFD, events: Int16(truncatingIfNeeded: POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, timeout)
            if ready < 0 {
                let error = Errno.current
                if error.code == EINTR { continue }
                fail(RPCError.unavailable("connection to \(address) failed: poll: \(error.message)"))
                return
            }
            if fds[1].revents != 0 { wakePipe.drain() }
            if mustWrite && fds[0].revents & Int16(truncatingIfNeeded: POLLOUT) != 0,
               case .failure(let error) = output.withLock({ $0.write(to: fd, tls: tls) }) {
                failExplained(RPCError(error.code, "cannot send to \(address): \(error.message)"))
                return
            }
            if fds[0].revents & readable == 0 { continue }

            let received = buffer.withUnsafeMutableBytes { raw in
                SystemCall.run { recv(fd, raw.baseAddress, raw.count, 0) }
            }
            switch received {
            case .success(0):
                failExplained(RPCError.unavailable("connection to \(address) closed by the server"))
                return
            case .success(let count):
                heardFromServer = true
                if let tls {
                    switch tls.open(Array(buffer[0..<count])) {
                    case .success(let plaintext):
                        plaintext.withUnsafeBytes { decoder.append($0) }
                    case .failure(let failure):
                        fail(RPCError(failure.code, "TLS error on the connection to \(address): \(failure.message)"))
                        return
                    }
                } else {
                    buffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
                if !deliverFrames(&decoder) { return }
                // What came before close_notify is delivered; nothing comes after it, even if
                // the server leaves the TCP connection open.
                if tls?.peerClosed == true {
                    fail(RPCError.unavailable("connection to \(address) closed by the server (TLS close_notify)"))
                    return
                }
            case .failure(let error):
                if error.code == EAGAIN || error.code == EWOULDBLOCK { continue }
                failExplained(RPCError.unavailable("connection to \(address) failed: \(error.message)"))
                return
            }
        }
    }

    /// Fails the connection with `error` (the socket failed or closed), or with what TLS says
    /// the cause was: a TLS 1.3 server that refuses a client certificate does so after the
    /// client's handshake, and its alert may be lost to the reset of its close, or met first by
    /// a send. Either way each call says whether its request was sent: the TLS explanation is
    /// a likely one, and a server that read a request and then died looks the same (review 33 M1).
    private func failExplained(_ error: RPCError) {
        guard let cause = tls?.likelyCauseOfAbruptEnd else { return fail(error) }
        fail(RPCError(cause.code, "TLS error on the connection to \(address): \(cause.message)"))
    }

    /// Fails calls past their deadline (dropping their frames not yet begun); returns the poll()
    /// timeout, or nil when the connection is over.
    /// - Parameter heardFromServer: whether any byte came from the server; if none did, the error
    ///   says so (a port that is not a Larder server's, e.g. an HTTP server waiting for a request,
    ///   looks the same as a stuck server: audit 27 L2).
    private func expireAndComputeTimeout(heardFromServer: Bool) -> Int32? {
        let now = ContinuousClock.now
        let (expired, timeout) = state.withLock { calls -> ([(id: UInt64, call: PendingCalls.Call)], Int32?) in
            if calls.failure != nil { return ([], nil) }
            let expired = calls.takeExpired(now: now)
            let nearest = calls.nearestDeadline()
            calls.readerWakeDeadline = nearest
            return (expired, nearest.map { Socket.milliseconds(now.duration(to: $0)) } ?? -1)
        }
        let silence = heardFromServer ? ""
            : " (nothing has come from it on this connection: a slow or stuck server, or not a Larder server on that port?)"
        if !expired.isEmpty {
            let ids = Set(expired.map(\.id))
            output.withLock { $0.drop(callIDs: ids) }
        }
        for (_, call) in expired {
            let after = call.timeout.map { " after \(formatSeconds($0))" } ?? ""
            call.continuation.resume(returning: .failure(RPCError(
                .deadlineExceeded, "call to \(call.method) timed out\(after) waiting for \(address)\(silence)")))
        }
        return timeout
    }

    /// Hands every complete frame to its call; false when the connection ended.
    private func deliverFrames(_ decoder: inout FrameDecoder) -> Bool {
        while true {
            let body: [UInt8]
            do {
                guard let next = try decoder.next() else { return true }
                body = next
            } catch {
                switch error {
                case .frameTooLarge(let length, let limit):
                    fail(Self.oversizedFrameError(address: address, length: length, limit: limit,
                                                  prefix: decoder.bufferedPrefix), tellingWhetherSent: false)
                }
                return false
            }
            let reply: ResponseEnvelope
            do {
                reply = try ResponseEnvelope.decodeReply(from: body)
            } catch {
                fail(RPCError(.internal, "\(address) sent an undecodable reply: \(error.message)"), tellingWhetherSent: false)
                return false
            }
            if reply.callID == 0 {
                fail(reply.clientError ?? RPCError.unavailable("\(address) ended the connection"), tellingWhetherSent: false)
                return false
            }
            complete(reply.callID, with: reply.clientError.map { .failure($0) } ?? .success(reply.payload))
        }
    }
}
