import CNghttp2
public import LarderWire

/// The server side of one gRPC-over-HTTP/2 connection, without a socket or a thread.
///
/// The connection's loop feeds it what it read (`receive`), acts on the events it returns, answers
/// calls (`sendHeaders`, `sendMessage`, `sendTrailers`), and once per loop turn gathers everything
/// to write into one buffer (`writeOutput(into:)`). It answers by itself what needs no call core:
/// a wrong content-type (HTTP 415), bad metadata, oversize headers or messages, compressed
/// messages it cannot inflate, a request delivered whole (`deliversWholeRequest`) that brings no message or two,
/// PING, SETTINGS, flow control; and it enforces the abuse limits of
/// `GRPCServerConfiguration` with a GOAWAY.
///
/// When `receive` throws, or `closeReason` is set, the connection is over: flush `writeOutput`
/// once (it holds the GOAWAY), close the socket, and end every call started on it. When
/// `isFinished` is true (after a drain, or a GOAWAY sent), close too.
///
/// Not thread-safe: one loop owns a session.
public final class GRPCServerSession: NGHTTP2SessionHandler {
    public let configuration: GRPCServerConfiguration
    private let engine: NGHTTP2Session
    private var streams = CallIDMap<GRPCServerStream>()
    private var events: [GRPCServerEvent] = []
    private var failure: GRPCSessionError?
    private var lastLibraryError: String?
    private var continuationFrames = 0
    /// The decoded size of the header block being received (request headers or trailers).
    private var headerBlockBytes = 0
    /// Bytes of the header block being received, as sent (its HEADERS and CONTINUATION frames).
    private var headerBlockWireBytes = 0
    private var pingStrikes = 0
    /// Streams this session reset itself (`reset`, an early answer's NO_ERROR), so that the
    /// RST_STREAM frames nghttp2 sends on its own can be told apart (`streamsResetByLibrary`).
    private var ownResets: Set<Int32> = []
    /// RST_STREAM frames nghttp2 sent on its own, by error code: REFUSED_STREAM for a stream
    /// over the limit before the client acknowledged our SETTINGS, PROTOCOL_ERROR for a
    /// malformed header field, … The core never saw those calls, so they appear in no call
    /// metric; the server logs them when the connection closes (`http2_streams_reset`).
    public private(set) var streamsResetByLibrary: [HTTP2ErrorCode: Int] = [:]
    private var lastPingAt: UInt64?
    private var sentDataSinceLastPing = true
    private var resets: TokenBucket
    private var startedResets: TokenBucket
    private var settingsFrames: TokenBucket
    private var streamMessages: TokenBucket
    private var idleFrames: TokenBucket
    private var drainPingData: UInt64?
    /// The drain's final GOAWAY (with the last stream id taken) was submitted.
    private var finalGoawaySubmitted = false
    /// The last stream id the final GOAWAY of a drain names, once it is queued.
    private var finalLastStreamID: Int32?
    /// The header block being received (one at a time on a connection) and the stream it opens.
    private var headerParser = GRPCRequestHeadParser()
    private var headerStream: GRPCServerStream?
    /// Strings of header values the peer repeats (its paths, authority, metadata names).
    private var strings = HTTP2StringCache()
    /// Messages completed by one DATA chunk, reused from chunk to chunk.
    private var messageScratch: [GRPCMessageDeframer.Message] = []
    /// Where the input stands against the framing (inside a frame or between frames).
    private var framing = FrameBoundary()
    /// Bytes compressed messages inflated to during the current `receive` (all held until its
    /// events are handled), against `maxDecompressedBytesPerRead`.
    private var decompressedThisRead = 0
    /// Bytes compressed messages may still inflate to on this connection: grows with the bytes
    /// received (`inflateBytesPerReceivedByte`), shrinks by what zlib produces.
    private var inflateCredit: Int

    /// Says, for a request's path, whether the method takes exactly one request message (unary
    /// and server-streaming methods). For those the session delivers the request whole: one
    /// `.request` event once the client half-closes, in place of `requestStarted`, `message` and
    /// `endOfInput`, and it answers a request with no message or more than one itself. Unset,
    /// or saying no (a bidirectional method), every message is its own event.
    public var deliversWholeRequest: ((_ head: GRPCRequestHead) -> Bool)?

    /// Response bytes queued on streams and not yet handed to nghttp2 (a peer's closed window
    /// holds them): count them against the server's memory budget.
    public private(set) var heldOutputBytes = 0
    /// Response bytes handed to nghttp2 so far, all streams together: held bytes that do not
    /// move while this stands still wait for a window the peer does not open.
    public private(set) var releasedOutputBytes: UInt64 = 0
    /// Request bytes the session holds on streams: partial messages (at most `maxMessageSize`
    /// per stream), and the heads (decoded header lists) and messages of requests it delivers
    /// whole once their client half-closes (`deliversWholeRequest`). Count them against the
    /// server's memory budget too.
    public private(set) var bufferedInputBytes = 0
    /// What the calls the core has hold while their streams are open: each one's decoded
    /// request head (its metadata goes with the call to its end) plus `streamStateBytes`. Count
    /// them against the memory budget too, but not as incomplete input: a Watch or reflection
    /// stream may stay open for hours. (Without this, a client opening 1,000 streams with
    /// 7 KB of metadata each on each of 40 connections held 340 MB outside the budget.)
    public private(set) var openCallBytes = 0
    /// About what one open stream costs beyond its head: nghttp2's stream and ours (measured
    /// about 1.4 KiB for a stream without metadata).
    public static let streamStateBytes = 1024

    /// True while the session holds part of a request: `bufferedInputBytes`, or input that ends
    /// inside the preface or a frame. The server's frame timeout runs meanwhile.
    public var holdsIncompleteInput: Bool { bufferedInputBytes > 0 || framing.isInsideFrame }

    /// For how long (nanoseconds) the server should read nothing more from this connection,
    /// once: set when the client resets started calls faster than the bucket for them refills
    /// (`startedResetBurst`, `startedResetsPerSecond`). Backpressure instead of a GOAWAY:
    /// deadlines expiring by the thousand a second are not abuse (audit 34 L2), and a client
    /// that resets faster is simply read no faster than the bucket allows.
    public func takeReadHold() -> UInt64? {
        defer { readHold = nil }
        return readHold
    }

    /// Why the connection ended, once a GOAWAY with an error went out (ours or nghttp2's own,
    /// e.g. for a malformed frame).
    public private(set) var closeReason: GRPCSessionError?

    /// What `takeReadHold` returns next.
    private var readHold: UInt64?

    /// Creates a session and queues our SETTINGS.
    public init(configuration: GRPCServerConfiguration = GRPCServerConfiguration()) throws(GRPCSessionError) {
        self.configuration = configuration
        inflateCredit = configuration.initialInflateBytes
        var options = NGHTTP2Session.Options()
        options.settings = [
            (Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), configuration.maxConcurrentStreams),
            (Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), UInt32(clamping: configuration.maxHeaderListSize)),
            (Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), min(configuration.initialWindowSize, UInt32(Int32.max))),
            (Int32(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE.rawValue), configuration.headerTableSize),
            (Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), 0),
        ]
        options.maxDeflateTableSize = configuration.encoderTableSize
        options.maxOutboundAcks = configuration.maxOutboundAcks
        options.connectionWindow = Int32(clamping: configuration.connectionWindowSize)
        options.peerMaxConcurrentStreams = configuration.maxConcurrentStreams
        do {
            engine = try NGHTTP2Session(role: .server, options: options)
        } catch {
            throw GRPCSessionError(.internalError, "cannot create the HTTP/2 session: \(error)")
        }
        let now = configuration.clock()
        resets = TokenBucket(burst: configuration.resetBurst, ratePerSecond: configuration.resetsPerSecond, now: now)
        // Never below every call a client may have in flight, cancelled twice over (and once a second).
        let streams = Int(clamping: configuration.maxConcurrentStreams)
        startedResets = TokenBucket(burst: max(configuration.startedResetBurst, 2 * streams),
                                    ratePerSecond: max(configuration.startedResetsPerSecond, streams), now: now)
        settingsFrames = TokenBucket(burst: configuration.settingsBurst, ratePerSecond: configuration.settingsPerSecond, now: now)
        streamMessages = TokenBucket(burst: configuration.streamMessageBurst,
                                     ratePerSecond: configuration.streamMessagesPerSecond, now: now)
        idleFrames = TokenBucket(burst: configuration.idleFrameBurst, ratePerSecond: configuration.idleFramesPerSecond, now: now)
        super.init()
        engine.attach(self)
    }

    // MARK: - Bytes

    /// Processes bytes read from the connection and returns what they meant, in order.
    /// Throws when the connection must end (a GOAWAY is queued; see the type's documentation).
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(GRPCSessionError) -> [GRPCServerEvent] {
        var events: [GRPCServerEvent] = []
        try receive(bytes, events: &events)
        return events
    }

    /// `receive`, putting the events in `events` (emptied first): a caller that hands the same
    /// array back each time, emptied with its capacity kept, makes no array per read.
    public func receive(_ bytes: UnsafeRawBufferPointer, events: inout [GRPCServerEvent]) throws(GRPCSessionError) {
        events.removeAll(keepingCapacity: true)
        if let failure { throw failure }
        decompressedThisRead = 0
        let earned = bytes.count.multipliedReportingOverflow(by: configuration.inflateBytesPerReceivedByte)
        let credit = inflateCredit.addingReportingOverflow(earned.partialValue)
        inflateCredit = earned.overflow || credit.overflow ? Int.max : credit.partialValue
        framing.advance(over: bytes)
        let result = engine.receive(bytes)
        if result < 0, failure == nil {
            switch Int32(truncatingIfNeeded: result) {
            case NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue:
                fail(.protocolError, "the connection did not start with the HTTP/2 client preface")
            case -905:  // NGHTTP2_ERR_TOO_MANY_CONTINUATIONS (Debian's 1.52-deb12u3 backport; not in older headers)
                fail(.enhanceYourCalm, "a header block came in too many CONTINUATION frames")
            case NGHTTP2_ERR_FLOODED.rawValue:
                fail(.enhanceYourCalm, "the peer does not read our acknowledgements (SETTINGS or PING flood)")
            default:
                fail(.internalError, "HTTP/2 input failed: \(String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: result))))")
            }
        }
        if let failure { throw failure }
        takeEvents(into: &events)
    }

    /// `receive` for bytes in an array.
    public func receive(_ bytes: [UInt8]) throws(GRPCSessionError) -> [GRPCServerEvent] {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(GRPCSessionError) in try receive(raw) }
        }
        return try result.get()
    }

    /// Appends every frame ready to go to `buffer` (write it in one go), and returns the calls
    /// that ended while sending (a stream nghttp2 reset for a protocol error).
    public func writeOutput(into buffer: inout [UInt8]) throws(GRPCSessionError) -> [GRPCServerEvent] {
        var events: [GRPCServerEvent] = []
        try writeOutput(into: &buffer, events: &events)
        return events
    }

    /// `writeOutput`, putting the events in `events` (emptied first), as `receive(_:events:)` does.
    public func writeOutput(into buffer: inout [UInt8], events: inout [GRPCServerEvent]) throws(GRPCSessionError) {
        try writeOutput(events: &events) { buffer.append(contentsOf: $0) }
    }

    /// `writeOutput(into:events:)`, handing the bytes to `sink` piece by piece, in order (each
    /// piece valid only during its call), for a caller that stores them its own way.
    public func writeOutput(events: inout [GRPCServerEvent], to sink: (UnsafeRawBufferPointer) -> Void) throws(GRPCSessionError) {
        events.removeAll(keepingCapacity: true)
        do {
            try engine.send(sink)
        } catch {
            let reason = GRPCSessionError(.internalError, "HTTP/2 output failed: \(error)")
            failure = failure ?? reason
            throw reason
        }
        takeEvents(into: &events)
    }

    /// True when the connection has nothing left to do (after a drain or a GOAWAY): close it.
    public var isFinished: Bool { !engine.wantsRead && !engine.wantsWrite }

    /// Calls in flight (started and not yet answered completely).
    public var activeStreamCount: Int { streams.count }

    /// Bytes nghttp2 holds for this session (HPACK tables, frame buffers, stream state), counting
    /// its page-backed blocks whole although only their touched pages are resident.
    public var engineMemoryBytes: Int { engine.allocatedBytes }

    // MARK: - Answering calls

    /// Sends the response HEADERS (`:status 200`, content-type, `metadata`). Optional: the first
    /// message sends them. False when the stream is gone or already answered.
    @discardableResult
    public func sendHeaders(streamID: Int32, metadata: GRPCMetadata = []) -> Bool {
        guard let stream = streams[stream: streamID], stream.phase == .active, !stream.responseStarted else { return false }
        startResponse(stream, metadata: metadata)
        return true
    }

    /// Queues one response message (the 5-byte prefix is added here); it goes out as the peer's
    /// flow-control window allows. False when the stream is gone or already answered.
    @discardableResult
    public func sendMessage(streamID: Int32, _ message: [UInt8]) -> Bool {
        guard streams[stream: streamID]?.phase == .active else { return false }
        var framed: [UInt8] = []
        framed.reserveCapacity(GRPCMessageFraming.prefixSize + message.count)
        GRPCMessageFraming.appendPrefix(count: message.count, to: &framed)
        framed += message
        return sendFramedMessage(streamID: streamID, framed, from: 0)
    }

    /// Queues one response message already framed: `bytes[offset...]` is the 5-byte prefix
    /// (`GRPCMessageFraming.appendPrefix`, uncompressed) and the message, taken without a copy
    /// (on a call whose replies are compressed, a message of 1 KiB or more is deflated into a
    /// new buffer instead, when that is smaller). False when the stream is gone or already answered.
    @discardableResult
    public func sendFramedMessage(streamID: Int32, _ bytes: [UInt8], from offset: Int) -> Bool {
        precondition(GRPCMessageFraming.isFramed(bytes, at: offset), "sendFramedMessage takes one uncompressed framed message")
        guard let stream = streams[stream: streamID], stream.phase == .active else { return false }
        if !stream.responseStarted { startResponse(stream, metadata: []) }
        if let encoding = stream.replyEncoding,
           bytes.count - offset - GRPCMessageFraming.prefixSize >= GRPCMessageCompression.minimumReplySize,
           let compressed = bytes.withUnsafeBytes({ GRPCMessageCompression.framedDeflate(
               UnsafeRawBufferPointer(rebasing: $0[(offset + GRPCMessageFraming.prefixSize)...]), encoding: encoding) }) {
            stream.enqueue(compressed, from: 0)
            heldOutputBytes += compressed.count
        } else {
            stream.enqueue(bytes, from: offset)
            heldOutputBytes += bytes.count - offset
        }
        engine.resumeData(streamID: streamID)
        return true
    }

    /// Ends the call with a status: trailers after the queued messages, or a Trailers-Only
    /// response when nothing was sent yet. False when the stream is gone or already answered.
    @discardableResult
    public func sendTrailers(streamID: Int32, status: StatusCode, message: String = "",
                             metadata: GRPCMetadata = []) -> Bool {
        guard let stream = streams[stream: streamID], stream.phase == .active else { return false }
        answer(stream, RPCError(status, message), metadata: metadata)
        return true
    }

    /// The client ended its input (end of stream on the connection): a request it has not
    /// finished (no END_STREAM yet) never will be. Resets those streams (CANCEL), so what they
    /// hold goes once the session's output is taken; a call the owner already has is ended by
    /// it (streams). Returns how many were reset.
    public func endOfInput() -> Int {
        var unfinished: [Int32] = []
        streams.forEach { _, stream in
            // Those the owner has (`active`) it ends itself (a stream's end, or a unary reply).
            let unstarted = stream.phase == .receivingHeaders || stream.phase == .collecting
            if !stream.clientHalfClosed && unstarted { unfinished.append(stream.id) }
        }
        for id in unfinished { reset(streamID: id) }
        return unfinished.count
    }

    /// Resets a stream (RST_STREAM `code`), e.g. when the core abandons a call.
    public func reset(streamID: Int32, code: HTTP2ErrorCode = .cancel) {
        guard let stream = streams[stream: streamID] else { return }
        stream.phase = .answered
        ownResets.insert(streamID)
        engine.submitReset(streamID: streamID, code: code)
    }

    // MARK: - Ending the connection

    /// Starts a graceful shutdown: a GOAWAY announcing it, a PING, and once the PING comes back
    /// a GOAWAY with the last stream id we took. Calls up to it are the owner's to serve (the
    /// client sent them before it saw the first GOAWAY); nghttp2 ignores streams above it.
    public func beginDrain() {
        guard drainPingData == nil, failure == nil else { return }
        drainPingData = 0x6C61_7264_6572_2121  // "larder!!"
        engine.submitShutdownNotice()
        engine.submitPing(0x6C61_7264_6572_2121)
    }

    /// Sends a PING to see whether the client is still there (the owner's keepalive); its
    /// answer, like anything else the client sends, shows it is.
    public func sendKeepalivePing() {
        guard failure == nil else { return }
        engine.submitPing(0x6B65_6570_616C_6976)  // "keepaliv"
    }

    /// Ends the wait for the drain's PING answer: the final GOAWAY, with the last stream id
    /// taken, goes out now (RFC 9113 §6.8), so a client that never answers still learns which
    /// of its calls were not processed. Nothing when no drain waits.
    public func finishDrain() {
        guard drainPingData != nil, failure == nil else { return }
        submitFinalGoaway()
    }

    private func submitFinalGoaway() {
        guard !finalGoawaySubmitted else { return }
        finalGoawaySubmitted = true
        let last = engine.lastProcessedStreamID
        finalLastStreamID = last
        engine.submitGoaway(lastStreamID: last, code: .noError,
                            debug: "graceful stop: streams above the last stream id were not processed; retry them elsewhere")
    }

    /// True from `beginDrain` until the client acknowledged its PING and the final GOAWAY was
    /// submitted: meanwhile the client may still be sending requests it opened before it saw the
    /// shutdown notice, which the final GOAWAY will count as processed (so serve them).
    public var awaitsDrainAcknowledgement: Bool { drainPingData != nil && !finalGoawaySubmitted && failure == nil }

    /// Ends the connection at once with a GOAWAY (e.g. an idle timeout: `.noError`).
    public func close(code: HTTP2ErrorCode, message: String) {
        fail(code, message)
    }

    // MARK: - Internals

    /// Hands the events so far to `output` (empty) and keeps its buffer for the next ones.
    private func takeEvents(into output: inout [GRPCServerEvent]) {
        guard !events.isEmpty else { return }
        swap(&events, &output)
    }

    /// Records why the connection ends and queues the GOAWAY; receive throws from now on.
    private func fail(_ code: HTTP2ErrorCode, _ message: String) {
        guard failure == nil else { return }
        let reason = GRPCSessionError(code, message)
        failure = reason
        closeReason = reason
        engine.submitGoaway(lastStreamID: engine.lastProcessedStreamID, code: code, debug: message)
    }

    /// The fields every response starts with, and the trailer of a call that succeeded (built once).
    private static let responseHeaders = [HTTP2HeaderField(":status", "200"), HTTP2HeaderField("content-type", "application/grpc")]
    private static let staticResponseHeaders = HTTP2StaticHeaders(responseHeaders)
    private static let okTrailers = HTTP2StaticHeaders([HTTP2HeaderField("grpc-status", "0")])

    private func startResponse(_ stream: GRPCServerStream, metadata: GRPCMetadata) {
        stream.responseStarted = true
        if let encoding = stream.replyEncoding {
            engine.submitResponse(streamID: stream.id, headers: Self.responseHeaders
                                  + [HTTP2HeaderField("grpc-encoding", encoding.rawValue)] + metadata.headerFields, hasBody: true)
        } else if metadata.isEmpty {
            engine.submitResponse(streamID: stream.id, headers: Self.staticResponseHeaders, hasBody: true)
        } else {
            engine.submitResponse(streamID: stream.id, headers: Self.responseHeaders + metadata.headerFields, hasBody: true)
        }
    }

    /// From now until its stream closes, `stream` counts in `openCallBytes`.
    private func countOpenCall(_ stream: GRPCServerStream) {
        stream.openCallBytes = stream.headerListSize + Self.streamStateBytes
        openCallBytes += stream.openCallBytes
    }

    /// The head of a request that is no longer being collected is not held any more.
    private func releaseHeldHead(_ stream: GRPCServerStream) {
        bufferedInputBytes -= stream.heldHeadBytes
        stream.heldHeadBytes = 0
    }

    /// Ends a stream with `error` (Trailers-Only when nothing was sent yet); a request the core
    /// never had is reported as `.refused` (with `path`, or its head's).
    private func answer(_ stream: GRPCServerStream, _ error: RPCError, httpStatus: Int = 200,
                        extraHeaders: [HTTP2HeaderField] = [], metadata: GRPCMetadata = [], path: String? = nil) {
        releaseHeldHead(stream)
        if stream.phase == .receivingHeaders || stream.phase == .collecting {
            events.append(.refused(streamID: stream.id, path: path ?? stream.head?.path, reason: error))
        }
        stream.phase = .answered
        if error.code == .ok && error.message.isEmpty && extraHeaders.isEmpty && metadata.isEmpty && stream.responseStarted {
            stream.pendingTrailers = .ok
            engine.resumeData(streamID: stream.id)
            return
        }
        var trailers = [HTTP2HeaderField("grpc-status", String(error.code.rawValue))]
        if !error.message.isEmpty { trailers.append(HTTP2HeaderField("grpc-message", GRPCPercentEncoding.encode(error.message))) }
        trailers += extraHeaders + metadata.headerFields
        if stream.responseStarted {
            stream.pendingTrailers = .fields(trailers)
            engine.resumeData(streamID: stream.id)
        } else {
            stream.responseStarted = true
            let headers = [HTTP2HeaderField(":status", String(httpStatus)),
                           HTTP2HeaderField("content-type", "application/grpc")] + trailers
            engine.submitResponse(streamID: stream.id, headers: headers, hasBody: false)
        }
    }

    /// Answers a call, and tells the core it is over when it has the call (a request still
    /// being collected was never delivered).
    private func answerAndCancel(_ stream: GRPCServerStream, _ error: RPCError, extraHeaders: [HTTP2HeaderField] = []) {
        let delivered = stream.phase == .active
        answer(stream, error, extraHeaders: extraHeaders)
        if delivered { events.append(.cancelled(streamID: stream.id, reason: error)) }
    }

    private func finishHeaders(_ stream: GRPCServerStream, endStream: Bool) {
        defer {
            headerParser.end()
            headerStream = nil
        }
        if endStream { stream.clientHalfClosed = true }
        if stream.headerListSize > configuration.maxHeaderListSize {
            answer(stream, RPCError(.resourceExhausted,
                "the request's header list decodes to \(stream.headerListSize) bytes, over the limit of \(configuration.maxHeaderListSize) bytes"))
            return
        }
        switch headerParser.finish() {
        case .failure(let rejection):
            answer(stream, rejection.error, httpStatus: rejection.httpStatus, extraHeaders: rejection.extraHeaders,
                   path: rejection.path)
        case .success(let head):
            stream.head = head
            if head.messageEncoding != nil {
                stream.replyEncoding = GRPCMessageEncoding.forReplies(requestEncoding: head.messageEncoding,
                                                                      acceptEncoding: head.acceptEncoding)
            }
            if let deliversWholeRequest, deliversWholeRequest(head) {
                stream.phase = .collecting
                stream.heldHeadBytes = stream.headerListSize
                bufferedInputBytes += stream.heldHeadBytes
                if endStream { deliverWhole(stream, head) }
                return
            }
            stream.phase = .active
            countOpenCall(stream)
            events.append(.requestStarted(head))
            if endStream { events.append(.endOfInput(streamID: stream.id)) }
        }
    }

    /// The client half-closed a collecting call: deliver its request, or answer it when it
    /// brought no message.
    private func deliverWhole(_ stream: GRPCServerStream, _ head: GRPCRequestHead) {
        releaseHeldHead(stream)
        guard let message = stream.heldMessage.take() else {
            answer(stream, RPCError(.internal, "the request ended without a message: \(head.path) takes one"))
            return
        }
        bufferedInputBytes -= message.count
        stream.phase = .active
        countOpenCall(stream)
        events.append(.request(head, message: message))
    }

    private func halfClose(_ stream: GRPCServerStream) {
        stream.clientHalfClosed = true
        guard stream.phase == .active || stream.phase == .collecting else { return }
        if stream.deframer.isAtMessageBoundary {
            if stream.phase == .collecting, let head = stream.head {
                deliverWhole(stream, head)
            } else {
                events.append(.endOfInput(streamID: stream.id))
            }
        } else {
            answerAndCancel(stream, RPCError(.internal,
                "the request ended inside a message (\(stream.deframer.receivedBytes) bytes of it received)"))
        }
    }

    private func receiveMessages(_ stream: GRPCServerStream, _ bytes: UnsafeRawBufferPointer) {
        if let whole = stream.deframer.wholeMessage(bytes) {
            // The usual unary request: one DATA chunk holding exactly one message.
            receiveMessage(whole, on: stream)
            return
        }
        var messages: [GRPCMessageDeframer.Message] = []
        swap(&messages, &messageScratch)
        let bufferedBefore = stream.deframer.bufferedBytes
        defer {
            bufferedInputBytes += stream.deframer.bufferedBytes - bufferedBefore
            messages.removeAll(keepingCapacity: true)
            swap(&messages, &messageScratch)
        }
        do {
            try stream.deframer.append(bytes, into: &messages)
        } catch {
            switch error {
            case .tooLarge(let length, let limit):
                answerAndCancel(stream, RPCError(.resourceExhausted,
                    "request message of \(length) bytes exceeds the limit of \(limit) bytes"))
            case .badFlag(let flag):
                answerAndCancel(stream, RPCError(.internal,
                    "a message's Compressed-Flag byte is \(flag): gRPC allows 0 (uncompressed) or 1 (compressed)"))
            }
            return
        }
        for message in messages {
            guard receiveMessage(message, on: stream) else { return }
        }
    }

    /// One complete request message of `stream`; false once the stream was answered.
    @discardableResult
    private func receiveMessage(_ message: GRPCMessageDeframer.Message, on stream: GRPCServerStream) -> Bool {
        var message = message
        if message.compressed {
            guard let bytes = decompress(message.bytes, on: stream) else { return false }
            message.bytes = bytes
        }
        if stream.phase == .collecting {
            if let held = stream.heldMessage.take() {
                bufferedInputBytes -= held.count
                answer(stream, RPCError(.internal,
                    "\(stream.head?.path ?? "this method") takes one request message: send exactly one"))
                return false
            }
            stream.heldMessage = message.bytes
            bufferedInputBytes += message.bytes.count
        } else {
            guard streamMessages.take(now: configuration.clock()) else {
                fail(.enhanceYourCalm, "too many messages on streaming calls")
                return false
            }
            events.append(.message(streamID: stream.id, message.bytes))
        }
        return true
    }

    /// A compressed message's bytes, inflated under the request's `grpc-encoding`; or nil once
    /// the call was answered: an encoding we do not take (UNIMPLEMENTED, naming those we do), no
    /// encoding or identity (INTERNAL), data that does not inflate (INTERNAL), or more than the
    /// message size or this read's allowance (RESOURCE_EXHAUSTED).
    private func decompress(_ compressed: [UInt8], on stream: GRPCServerStream) -> [UInt8]? {
        guard let name = stream.head?.messageEncoding, name.lowercased() != "identity" else {
            let declared = stream.head?.messageEncoding.map { "the request's grpc-encoding is \(SafeText.quoted($0))" }
            answerAndCancel(stream, RPCError(.internal,
                "a message has the compressed flag set but \(declared ?? "the request declared no grpc-encoding")"))
            return nil
        }
        guard let encoding = GRPCMessageEncoding(name: name) else {
            answerAndCancel(stream, RPCError(.unimplemented,
                "grpc-encoding \(SafeText.quoted(name)) is not supported: compress with gzip or deflate, or send messages uncompressed (grpc-accept-encoding: \(GRPCMessageEncoding.acceptHeader))"),
                extraHeaders: [HTTP2HeaderField("grpc-accept-encoding", GRPCMessageEncoding.acceptHeader)])
            return nil
        }
        let readAllowance = configuration.maxDecompressedBytesPerRead - decompressedThisRead
        let limit = min(configuration.maxMessageSize, readAllowance, inflateCredit)
        // zlib's work is charged whatever comes of it, so refused messages cost the peer too.
        var inflated = 0
        defer {
            decompressedThisRead += inflated
            inflateCredit -= inflated
        }
        do {
            return try GRPCMessageCompression.inflate(compressed, encoding: encoding, limit: limit, inflated: &inflated)
        } catch {
            switch error {
            case .tooLarge where limit == inflateCredit && limit < configuration.maxMessageSize:
                answerAndCancel(stream, RPCError(.resourceExhausted,
                    "the compressed requests of this connection inflate to more than \(configuration.inflateBytesPerReceivedByte) times the bytes it sent (and \(configuration.initialInflateBytes) bytes more): this one was refused; send it uncompressed (at most \(configuration.maxMessageSize) bytes)"))
            case .tooLarge where limit < configuration.maxMessageSize:
                answerAndCancel(stream, RPCError(.resourceExhausted,
                    "the compressed requests of one read inflate to more than \(configuration.maxDecompressedBytesPerRead) bytes in all: this one was refused; retry it"))
            case .tooLarge:
                answerAndCancel(stream, RPCError(.resourceExhausted,
                    "request message of \(compressed.count) bytes (\(name)) inflates to more than the limit of \(configuration.maxMessageSize) bytes"))
            case .corrupt(let reason):
                answerAndCancel(stream, RPCError(.internal,
                    "a \(name) request message of \(compressed.count) bytes does not inflate: \(reason)"))
            case .outOfMemory:
                answerAndCancel(stream, RPCError(.resourceExhausted,
                    "the server is out of memory to inflate a \(name) request message"))
            }
            return nil
        }
    }

    private func receivedPing(_ frame: NGHTTP2Frame) -> Bool {
        if frame.isAck {
            if let drainPingData, frame.pingData == drainPingData { submitFinalGoaway() }
            return true
        }
        let now = configuration.clock()
        if let lastPingAt, !sentDataSinceLastPing, now &- lastPingAt < configuration.minPingIntervalNanoseconds {
            pingStrikes += 1
            if pingStrikes > configuration.maxPingStrikes {
                fail(.enhanceYourCalm, "too_many_pings")
                return false
            }
        }
        lastPingAt = now
        sentDataSinceLastPing = false
        return true
    }

    // MARK: - nghttp2 callbacks

    override func beginFrame(type: UInt8, flags: UInt8, streamID: Int32, length: Int) -> Bool {
        guard failure == nil else { return false }
        switch NGHTTP2Frame.Kind(rawValue: type) {
        case .headers:
            continuationFrames = 0
            headerBlockWireBytes = length
        case .continuation:
            continuationFrames += 1
            headerBlockWireBytes += length
            if continuationFrames > configuration.maxContinuationFrames {
                fail(.enhanceYourCalm, "a header block came in more than \(configuration.maxContinuationFrames) CONTINUATION frames")
                return false
            }
        // DATA that is empty, or only a Pad Length of 0, counted on any stream (nghttp2 drops
        // those of closed streams unseen); padding alone past that is counted when received.
        case .data where flags & NGHTTP2Frame.flagEndStream == 0
                && (length == 0 || (length == 1 && flags & NGHTTP2Frame.flagPadded != 0)),
             .priority:
            return tookIdleFrame()
        default:
            break
        }
        return true
    }

    /// Takes a token for a frame that carries no work (empty or padding-only DATA without
    /// END_STREAM, PRIORITY); false (and a GOAWAY ENHANCE_YOUR_CALM) when none is left.
    private func tookIdleFrame() -> Bool {
        guard idleFrames.take(now: configuration.clock()) else {
            fail(.enhanceYourCalm, "too many frames that carry no work (empty or padding-only DATA, PRIORITY)")
            return false
        }
        return true
    }

    override func beginHeaders(_ frame: NGHTTP2Frame) -> Bool {
        headerParser.begin(streamID: frame.streamID)
        headerStream = nil
        headerBlockBytes = 0
        if frame.isRequestHeaders, let last = finalLastStreamID, frame.streamID > last {
            // The final GOAWAY says this stream was not processed, and so it must not be: nghttp2
            // ignores streams above its last stream id only once it sends it, and a client's
            // PING answer and its next request can come in one read (grpc core writes them so:
            // audit 34 H1, a write run twice when the client retried it). REFUSED_STREAM also
            // tells the client it may retry it. (Once the GOAWAY is sent, nghttp2 closes the
            // stream before this reset goes out: `frameSent` knows it by its id.)
            engine.submitReset(streamID: frame.streamID, code: .refusedStream)
            return failure == nil
        }
        if frame.isRequestHeaders {
            let stream = GRPCServerStream(id: frame.streamID, maxMessageSize: configuration.maxMessageSize)
            streams[stream: frame.streamID] = stream
            headerStream = stream
        }
        return failure == nil
    }

    override func header(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> NGHTTP2HeaderVerdict {
        guard failure == nil else { return .failConnection }
        // Every block counts, trailers too: a few bytes of HPACK can decode to megabytes.
        headerBlockBytes += name.count + value.count + 32
        if headerBlockBytes > configuration.maxHeaderListSize * configuration.headerBombFactor
            && headerBlockBytes > headerBlockWireBytes * configuration.headerBombRatio {
            fail(.enhanceYourCalm, "a header block decoded to more than \(configuration.maxHeaderListSize * configuration.headerBombFactor) bytes")
            return .failConnection
        }
        guard let stream = headerStream, stream.id == streamID, headerParser.streamID == streamID,
              stream.phase == .receivingHeaders else { return .accept }
        stream.headerListSize = headerBlockBytes
        if stream.headerListSize > configuration.maxHeaderListSize {
            headerParser.discard()
        } else {
            headerParser.add(name: name, value: Self.trimmingWhitespace(value), strings: &strings)
        }
        return .accept
    }

    /// `value` without the spaces and tabs around it: they are not part of a field value (RFC 9110
    /// §5.5), and clients send them (`authorization: Bearer t `, which gRPC servers accept);
    /// nghttp2 lets them through instead of resetting the stream (`NGHTTP2Session`'s options).
    @inline(__always)
    static func trimmingWhitespace(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        // The usual case, nothing to trim, in two compares.
        if let first = value.first, first != 0x20 && first != 0x09, value[value.count - 1] != 0x20,
           value[value.count - 1] != 0x09 { return value }
        var start = 0
        var end = value.count
        while start < end && (value[start] == 0x20 || value[start] == 0x09) { start += 1 }
        while end > start && (value[end - 1] == 0x20 || value[end - 1] == 0x09) { end -= 1 }
        return start == 0 && end == value.count ? value : UnsafeRawBufferPointer(rebasing: value[start..<end])
    }

    override func frameReceived(_ frame: NGHTTP2Frame) -> Bool {
        guard failure == nil else { return false }
        switch frame.kind {
        case .headers:
            guard let stream = streams[stream: frame.streamID] else { return true }
            if frame.isRequestHeaders {
                finishHeaders(stream, endStream: frame.endStream)
            } else if headerBlockBytes > configuration.maxHeaderListSize {
                if stream.phase == .active || stream.phase == .collecting {
                    answerAndCancel(stream, RPCError(.resourceExhausted,
                        "the request's trailers decode to \(headerBlockBytes) bytes, over the limit of \(configuration.maxHeaderListSize) bytes"))
                }
            } else if frame.endStream {
                halfClose(stream)
            }
        case .data:
            if frame.endStream {
                if let stream = streams[stream: frame.streamID] { halfClose(stream) }
            } else if frame.dataLength == 0 && frame.length > 1 {
                return tookIdleFrame()
            }
        case .rstStream:
            // Rapid reset (CVE-2023-44487): resets of requests the core does not have yet count
            // against a tight bucket; resets of started calls against a large one (see
            // `GRPCServerConfiguration.startedResetBurst`: clients cancel calls in bulk for good
            // reasons). Past it, reading waits for the bucket (`takeReadHold`), and only a client
            // that owes a whole bucket more in one read is ended.
            guard let stream = streams[stream: frame.streamID] else { break }
            let started = !(stream.phase == .receivingHeaders || stream.phase == .collecting)
            let now = configuration.clock()
            if started ? startedResets.take(now: now) : resets.take(now: now) { break }
            guard started && startedResets.borrow(now: now) else {
                fail(.enhanceYourCalm, "too many calls reset by the client (rapid reset)")
                return false
            }
            readHold = startedResets.waitForToken(now: now)
        case .ping:
            return receivedPing(frame)
        case .settings where !frame.isAck:
            if !settingsFrames.take(now: configuration.clock()) {
                fail(.enhanceYourCalm, "too many SETTINGS frames")
                return false
            }
        default:
            break
        }
        return true
    }

    override func dataChunk(streamID: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard failure == nil else { return false }
        guard let stream = streams[stream: streamID], stream.phase == .active || stream.phase == .collecting else { return true }
        receiveMessages(stream, bytes)
        return true
    }

    override func frameSent(_ frame: NGHTTP2Frame) {
        switch frame.kind {
        case .headers, .data:
            pingStrikes = 0
            sentDataSinceLastPing = true
            // A response complete before the request (an error answered early): gRPC servers
            // then reset the stream with NO_ERROR so the client stops sending.
            if frame.endStream, let stream = streams[stream: frame.streamID], !stream.clientHalfClosed {
                ownResets.insert(frame.streamID)
                engine.submitReset(streamID: frame.streamID, code: .noError)
            }
        case .rstStream:
            let refusedForDrain = finalLastStreamID.map { frame.streamID > $0 } ?? false
            if ownResets.remove(frame.streamID) == nil && !refusedForDrain {
                streamsResetByLibrary[HTTP2ErrorCode(rawValue: frame.errorCode), default: 0] += 1
            }
        case .goaway where frame.errorCode != HTTP2ErrorCode.noError.rawValue:
            if closeReason == nil {
                let debugText = frame.debugData.isEmpty ? nil : String(decoding: frame.debugData, as: UTF8.self)
                let code = HTTP2ErrorCode(rawValue: frame.errorCode)
                let why = lastLibraryError ?? debugText.map { SafeText.escaped($0) }
                closeReason = GRPCSessionError(code, why ?? (code == .compressionError
                    ? "a header block could not be decoded (HPACK): one header field over 64 KiB, which nghttp2 "
                        + "refuses (a request's metadata may hold 8 KiB in all), or a corrupt block"
                    : "the peer broke the HTTP/2 protocol"))
            }
        default:
            break
        }
    }

    override func streamClosed(streamID: Int32, errorCode: UInt32) {
        // nghttp2 sends a reset before it reports the stream closed; one it never sent (the
        // client closed the stream first) is forgotten here.
        if !ownResets.isEmpty { ownResets.remove(streamID) }
        guard let stream = streams.removeValue(forStream: streamID) else { return }
        if headerStream === stream { headerStream = nil }
        heldOutputBytes -= stream.queuedBytes
        bufferedInputBytes -= stream.deframer.bufferedBytes + (stream.heldMessage?.count ?? 0) + stream.heldHeadBytes
        openCallBytes -= stream.openCallBytes
        guard stream.phase == .active else { return }
        stream.phase = .answered
        let code = HTTP2ErrorCode(rawValue: errorCode)
        let message = code == .cancel ? "the client cancelled the call" : "the stream was reset (\(code))"
        events.append(.cancelled(streamID: streamID, reason: RPCError(.cancelled, message)))
    }

    override func readData(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> NGHTTP2DataRead {
        guard let stream = streams[stream: streamID] else { return .bytes(count: 0, endOfData: true, endStream: true) }
        let count = stream.dequeue(into: buffer)
        heldOutputBytes -= count
        releasedOutputBytes &+= UInt64(count)
        if stream.isQueueEmpty, let trailers = stream.pendingTrailers {
            stream.pendingTrailers = nil
            switch trailers {
            case .ok: engine.submitTrailer(streamID: streamID, headers: Self.okTrailers)
            case .fields(let fields): engine.submitTrailer(streamID: streamID, headers: fields)
            }
            return .bytes(count: count, endOfData: true, endStream: false)
        }
        return count == 0 ? .deferred : .bytes(count: count, endOfData: false, endStream: false)
    }

    override func libraryError(_ message: String) {
        lastLibraryError = message
    }
}
