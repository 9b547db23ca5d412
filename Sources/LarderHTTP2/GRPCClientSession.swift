import CNghttp2

/// A minimal gRPC-over-HTTP/2 client connection on the same engine, without a socket: it writes
/// requests into a buffer and collects each stream's response. Tests drive `GRPCServerSession`
/// with it and the fuzz seeds are its byte streams; `larder bench --protocol grpc` uses
/// `GRPCLoadClientSession`, the same engine without the per-call dictionaries of strings.
///
/// Not thread-safe: one loop owns a session.
public final class GRPCClientSession: NGHTTP2SessionHandler {
    /// Client-side knobs.
    public struct Options: Sendable {
        /// SETTINGS_INITIAL_WINDOW_SIZE we announce: how much response data the server may send
        /// per stream before our WINDOW_UPDATE (sent automatically as we consume).
        public var initialWindowSize: UInt32 = 65_535
        /// The largest DATA payload we write at once (split messages over several frames).
        public var maxDataChunk = 16_384
        /// Whether the server's PINGs are acknowledged (off: a peer that never answers them).
        public var acknowledgesPings = true

        public init() {}
    }

    /// What came back on one stream.
    public struct Response: Sendable {
        /// The `:status` and other fields of the first HEADERS.
        public var headers: [String: String] = [:]
        /// Whole response messages.
        public var messages: [[UInt8]] = []
        /// The trailers (for a Trailers-Only response, the same fields as `headers`).
        public var trailers: [String: String] = [:]
        /// The server ended the stream (END_STREAM received).
        public var ended = false
        /// GOAWAY frames received before the stream ended (what a client that stops at the
        /// first GOAWAY would have missed of it).
        public var goawaysBeforeEnd = 0
        /// The stream closed, with this code (RST_STREAM, or NO_ERROR for a normal end).
        public var closeCode: HTTP2ErrorCode?
        /// Response bytes received (in DATA frames).
        public var dataBytes = 0

        var headerBlocks = 0
        var deframer = GRPCMessageDeframer(maxMessageSize: Int(Int32.max))
    }

    /// A GOAWAY the server sent.
    public typealias Goaway = HTTP2Goaway

    public let options: Options
    private let engine: NGHTTP2Session
    /// Each stream's response so far, by stream id.
    public private(set) var responses: [Int32: Response] = [:]
    /// The GOAWAY frames received, in order.
    public private(set) var goaways: [Goaway] = []
    /// PING acknowledgements received.
    public private(set) var pingAcks = 0
    private var outbound: [Int32: (bytes: [UInt8], offset: Int, endInput: Bool)] = [:]

    public init(options: Options = Options()) throws(GRPCSessionError) {
        self.options = options
        engine = try NGHTTP2Session.grpcClient(initialWindowSize: options.initialWindowSize) { tuned in
            tuned.acknowledgesPings = options.acknowledgesPings
        }
        super.init()
        engine.attach(self)
    }

    /// The header fields of a gRPC request: pseudo-headers, content-type, te, then `extra` in order.
    public static func requestHeaders(path: String, extra: [(String, String)] = [],
                                      contentType: String = "application/grpc") -> [(String, String)] {
        [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
         ("content-type", contentType), ("te", "trailers")] + extra
    }

    /// Opens a stream with these header fields (see `requestHeaders`); returns its id, or nil
    /// when nghttp2 refuses (no stream ids left, or the session is closing).
    public func startCall(headers: [(String, String)], endInput: Bool = false) -> Int32? {
        let fields = headers.map { HTTP2HeaderField($0.0, $0.1) }
        let streamID = engine.submitRequest(headers: fields, hasBody: !endInput)
        guard streamID > 0 else { return nil }
        responses[streamID] = Response()
        if !endInput { outbound[streamID] = ([], 0, false) }
        return streamID
    }

    /// Queues one request message (with its 5-byte prefix; `compressed` sets the flag).
    public func sendMessage(streamID: Int32, _ message: [UInt8], compressed: Bool = false) {
        sendRaw(streamID: streamID, GRPCMessageDeframer.prefix(count: message.count, compressed: compressed) + message)
    }

    /// Queues raw request body bytes.
    public func sendRaw(streamID: Int32, _ bytes: [UInt8]) {
        guard outbound[streamID] != nil else { return }
        outbound[streamID]?.bytes += bytes
        engine.resumeData(streamID: streamID)
    }

    /// Half-closes the stream after what is queued.
    public func endInput(streamID: Int32) {
        guard outbound[streamID] != nil else { return }
        outbound[streamID]?.endInput = true
        engine.resumeData(streamID: streamID)
    }

    /// Resets a stream (RST_STREAM CANCEL).
    public func reset(streamID: Int32, code: HTTP2ErrorCode = .cancel) {
        outbound[streamID] = nil
        engine.submitReset(streamID: streamID, code: code)
    }

    /// Queues a PING.
    public func ping(_ data: UInt64 = 0) { engine.submitPing(data) }

    /// Processes bytes from the server. Throws when nghttp2 rejects them.
    public func receive(_ bytes: [UInt8]) throws(GRPCSessionError) {
        let result = bytes.withUnsafeBytes { engine.receive($0) }
        if result < 0 {
            throw GRPCSessionError(.protocolError, String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: result))))
        }
    }

    /// Appends every frame ready to go to `buffer`.
    public func writeOutput(into buffer: inout [UInt8]) throws(GRPCSessionError) {
        do {
            try engine.send(into: &buffer)
        } catch {
            throw GRPCSessionError(.internalError, "HTTP/2 output failed: \(error)")
        }
    }

    // MARK: - nghttp2 callbacks

    override func beginHeaders(_ frame: NGHTTP2Frame) -> Bool {
        responses[frame.streamID]?.headerBlocks += 1
        return true
    }

    override func header(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> NGHTTP2HeaderVerdict {
        guard let blocks = responses[streamID]?.headerBlocks else { return .accept }
        let key = String(decoding: name, as: UTF8.self)
        let text = String(decoding: value, as: UTF8.self)
        if blocks == 1 { responses[streamID]?.headers[key] = text } else { responses[streamID]?.trailers[key] = text }
        return .accept
    }

    override func frameReceived(_ frame: NGHTTP2Frame) -> Bool {
        switch frame.kind {
        case .headers, .data:
            guard frame.endStream, var response = responses[frame.streamID] else { return true }
            response.ended = true
            response.goawaysBeforeEnd = goaways.count
            if response.headerBlocks == 1, frame.kind == .headers { response.trailers = response.headers }
            responses[frame.streamID] = response
        case .goaway:
            goaways.append(Goaway(lastStreamID: frame.lastStreamID, code: HTTP2ErrorCode(rawValue: frame.errorCode),
                                   debugText: String(decoding: frame.debugData, as: UTF8.self)))
        case .ping where frame.isAck:
            pingAcks += 1
        default:
            break
        }
        return true
    }

    override func dataChunk(streamID: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var response = responses[streamID] else { return true }
        responses[streamID] = nil  // keep the value uniquely referenced while it grows
        var messages: [GRPCMessageDeframer.Message] = []
        try? response.deframer.append(bytes, into: &messages)
        response.messages += messages.map(\.bytes)
        response.dataBytes += bytes.count
        responses[streamID] = response
        return true
    }

    override func streamClosed(streamID: Int32, errorCode: UInt32) {
        responses[streamID]?.closeCode = HTTP2ErrorCode(rawValue: errorCode)
        outbound[streamID] = nil
    }

    override func readData(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> NGHTTP2DataRead {
        guard let pending = outbound[streamID] else { return .bytes(count: 0, endOfData: true, endStream: true) }
        let count = min(buffer.count, options.maxDataChunk, pending.bytes.count - pending.offset)
        pending.bytes.withUnsafeBytes { source in
            let slice = UnsafeRawBufferPointer(rebasing: source[pending.offset..<(pending.offset + count)])
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).copyMemory(from: slice)
        }
        let offset = pending.offset + count
        let done = offset == pending.bytes.count
        outbound[streamID] = done ? ([], 0, pending.endInput) : (pending.bytes, offset, pending.endInput)
        if done && pending.endInput { return .bytes(count: count, endOfData: true, endStream: true) }
        return count == 0 ? .deferred : .bytes(count: count, endOfData: false, endStream: false)
    }
}
