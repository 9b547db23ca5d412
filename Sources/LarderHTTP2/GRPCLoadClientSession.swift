import CNghttp2
public import LarderWire

/// A gRPC-over-HTTP/2 client connection for load generation, on the same engine as
/// `GRPCClientSession` but lean per call: requests are a prepared header block and a
/// pre-framed body, many calls run at once (one stream each), and a call's outcome is only its
/// status (grpc-status, or one synthesized from the HTTP status or a reset), its message when
/// it failed, and the first bytes of the reply when asked for. No socket: bytes in through
/// `receive`, bytes out through `writeOutput`.
///
/// Not thread-safe: one loop owns a session.
public final class GRPCLoadClientSession: NGHTTP2SessionHandler {
    /// Client-side knobs.
    public struct Options: Sendable {
        /// SETTINGS_INITIAL_WINDOW_SIZE we announce (per-stream receive window).
        public var initialWindowSize: UInt32 = 16 << 20
        /// Our connection-level receive window.
        public var connectionWindow: Int32 = 1 << 30
        /// Streams we may open before the server's SETTINGS say how many it allows. One: a
        /// server allowing fewer than we would open refuses the rest (REFUSED_STREAM), while
        /// nghttp2 holds requests beyond the limit until streams free, so the others wait the one
        /// round trip for its SETTINGS (as stock gRPC clients queue calls over the limit).
        public var maxConcurrentStreams: UInt32 = 1
        /// Reply bytes kept (after the 5-byte message prefix) for a call started with `captureReply`.
        public var capturedReplyBytes = 64

        public init() {}
    }

    /// How one call ended.
    public struct Completion: Sendable {
        /// What `startCall` was given.
        public var tag: Int
        /// The gRPC status code.
        public var status: StatusCode
        /// grpc-message (percent-decoded) or why the status was synthesized; nil when OK.
        public var message: String?
        /// The reply's first bytes after the message prefix (calls started with `captureReply`).
        public var reply: [UInt8]
    }

    /// A GOAWAY the server sent.
    public typealias Goaway = HTTP2Goaway

    private struct Stream {
        var tag: Int
        var body: [UInt8]
        var offset = 0
        var grpcStatus: Int32 = -1
        var httpStatus = 0
        var message: [UInt8]?
        var capture: Bool
        var dataBytes = 0
        var reply: [UInt8] = []
    }

    public let options: Options
    private let engine: NGHTTP2Session
    private var streams: [Int32: Stream] = [:]
    /// Calls ended since the last `takeCompletions`.
    private var completions: [Completion] = []
    /// The GOAWAY frames received, in order.
    public private(set) var goaways: [Goaway] = []
    /// nghttp2's text for the last error it reported (a protocol error of the server, say).
    public private(set) var lastLibraryError: String?

    public init(options: Options = Options()) throws(GRPCSessionError) {
        self.options = options
        engine = try NGHTTP2Session.grpcClient(initialWindowSize: options.initialWindowSize) { tuned in
            tuned.connectionWindow = options.connectionWindow
            tuned.peerMaxConcurrentStreams = options.maxConcurrentStreams
        }
        super.init()
        engine.attach(self)
        completions.reserveCapacity(256)
    }

    /// A request body of one message: the 5-byte gRPC prefix (uncompressed), then `message`.
    public static func body(message: [UInt8]) -> [UInt8] {
        GRPCMessageDeframer.prefix(count: message.count) + message
    }

    /// Starts a call: HEADERS from `headers`, then `body` (see `body(message:)`) with END_STREAM.
    /// Returns false after the server's GOAWAY (it takes no new streams), or when nghttp2 refuses
    /// (stream ids used up).
    public func startCall(_ headers: GRPCRequestHeaderBlock, body: [UInt8], tag: Int, captureReply: Bool = false) -> Bool {
        guard goaways.isEmpty else { return false }
        let streamID = engine.submitRequest(nameValues: headers.nameValues, count: headers.count)
        guard streamID > 0 else { return false }
        streams[streamID] = Stream(tag: tag, body: body, capture: captureReply)
        return true
    }

    /// Calls in flight (started, not yet ended), those waiting in the session for a stream included.
    public var inFlight: Int { streams.count }

    /// How many streams the server lets this connection have open at once (its
    /// SETTINGS_MAX_CONCURRENT_STREAMS); nil until its SETTINGS came (nghttp2 then holds our own
    /// guess, one stream). Calls beyond it wait here.
    public var serverStreamLimit: UInt32? { receivedSettings ? engine.remoteMaxConcurrentStreams : nil }
    /// Whether the server's SETTINGS (not an acknowledgement of ours) has arrived.
    private var receivedSettings = false

    /// Processes bytes from the server; ended calls queue up for `takeCompletions`.
    /// - Throws: when nghttp2 rejects the bytes (the connection is unusable).
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(GRPCSessionError) {
        let result = engine.receive(bytes)
        if result < 0 {
            throw GRPCSessionError(.protocolError, String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: result))))
        }
    }

    /// Hands the calls ended since the last call to `body`, in the order they ended.
    public func takeCompletions(_ body: (Completion) -> Void) {
        guard !completions.isEmpty else { return }
        let ended = completions
        completions.removeAll(keepingCapacity: true)
        for completion in ended { body(completion) }
    }

    /// Hands every frame ready to go to `sink`, chunk by chunk (valid during the call only).
    public func writeOutput(_ sink: (UnsafeRawBufferPointer) -> Void) throws(GRPCSessionError) {
        do {
            try engine.send(sink)
        } catch {
            throw GRPCSessionError(.internalError, "HTTP/2 output failed: \(error)")
        }
    }

    /// Whether nghttp2 has frames to send.
    public var wantsWrite: Bool { engine.wantsWrite }
    /// Whether the connection is over (GOAWAY exchanged, nothing left to read or write).
    public var isFinished: Bool { !engine.wantsRead && !engine.wantsWrite }

    // MARK: - Statuses

    /// The status of a stream that ended (PROTOCOL-HTTP2.md: a non-200 HTTP status and a reset
    /// map to gRPC codes; a stream that ended without grpc-status is INTERNAL).
    private static func completion(_ stream: Stream, errorCode: UInt32) -> Completion {
        let reply = stream.reply
        if stream.httpStatus != 200 && stream.httpStatus != 0 {
            let code: StatusCode = switch stream.httpStatus {
            case 400: .internal
            case 401: .unauthenticated
            case 403: .permissionDenied
            case 404: .unimplemented
            case 429, 502, 503, 504: .unavailable
            default: .unknown
            }
            return Completion(tag: stream.tag, status: code, message: "HTTP status \(stream.httpStatus)", reply: reply)
        }
        if stream.grpcStatus >= 0 {
            let status = StatusCode(rawValue: stream.grpcStatus)
            let message = status == .ok ? nil
                : stream.message.map { GRPCPercentEncoding.decode($0) } ?? ""
            return Completion(tag: stream.tag, status: status, message: message, reply: reply)
        }
        let reset = HTTP2ErrorCode(rawValue: errorCode)
        let code: StatusCode = switch reset {
        case .refusedStream: .unavailable
        case .cancel: .cancelled
        case .enhanceYourCalm: .resourceExhausted
        case .inadequateSecurity: .permissionDenied
        default: .internal
        }
        let message = reset == .noError ? "the stream ended without grpc-status" : "stream reset by the server: \(reset)"
        return Completion(tag: stream.tag, status: code, message: message, reply: reply)
    }

    /// A gRPC message's prefix: the compressed flag and a 4-byte length.
    private static let messagePrefixSize = 5
    private static let statusName = Array(":status".utf8)
    private static let grpcStatusName = Array("grpc-status".utf8)
    private static let grpcMessageName = Array("grpc-message".utf8)

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ name: [UInt8]) -> Bool {
        guard bytes.count == name.count else { return false }
        for index in 0..<name.count where bytes[index] != name[index] { return false }
        return true
    }

    private static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard !bytes.isEmpty, bytes.count <= 9 else { return -1 }
        var value: Int32 = 0
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39 else { return -1 }
            value = value * 10 + Int32(byte - 0x30)
        }
        return value
    }

    // MARK: - nghttp2 callbacks

    override func header(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> NGHTTP2HeaderVerdict {
        switch name.count {
        case 7 where Self.equal(name, Self.statusName):
            streams[streamID]?.httpStatus = Int(Self.decimal(value))
        case 11 where Self.equal(name, Self.grpcStatusName):
            let code = Self.decimal(value)
            streams[streamID]?.grpcStatus = code < 0 ? StatusCode.unknown.rawValue : code
        case 12 where Self.equal(name, Self.grpcMessageName):
            streams[streamID]?.message = Array(value)
        default:
            break
        }
        return .accept
    }

    override func frameSent(_ frame: NGHTTP2Frame) {
        // nghttp2 ends a session it cannot go on with by a GOAWAY of its own: keep why.
        guard frame.kind == .goaway, lastLibraryError == nil else { return }
        let text = String(decoding: frame.debugData, as: UTF8.self)
        lastLibraryError = "sent GOAWAY \(HTTP2ErrorCode(rawValue: frame.errorCode))" + (text.isEmpty ? "" : " (\(text))")
    }

    override func frameReceived(_ frame: NGHTTP2Frame) -> Bool {
        if frame.kind == .settings && frame.flags & NGHTTP2Frame.flagAck == 0 { receivedSettings = true }
        if frame.kind == .goaway {
            goaways.append(Goaway(lastStreamID: frame.lastStreamID, code: HTTP2ErrorCode(rawValue: frame.errorCode),
                                   debugText: String(decoding: frame.debugData, as: UTF8.self)))
        }
        return true
    }

    override func dataChunk(streamID: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let index = streams.index(forKey: streamID), streams.values[index].capture else { return true }
        let already = streams.values[index].dataBytes
        let wanted = Self.messagePrefixSize + options.capturedReplyBytes
        if already < wanted {
            let take = min(bytes.count, wanted - already)
            let skip = max(0, Self.messagePrefixSize - already)
            if take > skip { streams.values[index].reply += bytes[skip..<take] }
        }
        streams.values[index].dataBytes += bytes.count
        return true
    }

    override func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        completions.append(Self.completion(stream, errorCode: errorCode))
    }

    override func readData(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> NGHTTP2DataRead {
        guard let index = streams.index(forKey: streamID) else {
            return .bytes(count: 0, endOfData: true, endStream: true)
        }
        let offset = streams.values[index].offset
        let count = streams.values[index].body.withUnsafeBytes { source in
            let count = min(buffer.count, source.count - offset)
            if count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
            }
            return count
        }
        streams.values[index].offset = offset + count
        let done = offset + count == streams.values[index].body.count
        return .bytes(count: count, endOfData: done, endStream: done)
    }

    override func libraryError(_ message: String) { lastLibraryError = message }
}
