import CNghttp2
#if canImport(Glibc)
import Glibc
#endif

/// The one owner of an `nghttp2_session`: bytes in through `receive`, bytes out through
/// `send(into:)`, frames submitted through typed methods. It owns no socket and no thread;
/// nghttp2's callbacks reach `handler` through the context pointer, which is this object.
///
/// Not thread-safe: one connection's loop owns it. Every byte nghttp2 allocates goes through
/// this object's allocator, so `allocatedBytes` is what the session holds.
final class NGHTTP2Session {
    enum Role { case server, client }

    /// The nghttp2 knobs a session is created with.
    struct Options {
        var settings: [(id: Int32, value: UInt32)] = []
        /// Our HPACK encoder's dynamic table (what we make the peer hold for our headers).
        var maxDeflateTableSize = 4096
        /// Queued SETTINGS/PING acknowledgements before nghttp2 calls it a flood.
        var maxOutboundAcks = 1000
        /// Entries accepted in one SETTINGS frame.
        var maxSettingsEntries = 32
        /// The connection-level receive window (the stream level is SETTINGS_INITIAL_WINDOW_SIZE).
        var connectionWindow: Int32 = 65_535
        /// Streams the peer may have open before the first SETTINGS ACK arrives (client role: our
        /// limit on what we open).
        var peerMaxConcurrentStreams: UInt32 = 100
        /// nghttp2 acknowledges the peer's PINGs by itself (off: tests of peers that never do).
        var acknowledgesPings = true
    }

    /// A negative nghttp2 return code with its text.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: nghttp2_strerror(code)) }
    }

    private var session: OpaquePointer?
    /// Who hears about frames: the owner of this engine (every owner keeps it in a private
    /// `let` and attaches itself), so it outlives the engine, and nghttp2 calls back only from
    /// the owner's calls into it (`nghttp2_session_del` calls none). Hence unretained, and
    /// called without a retain and release around each callback (see `NGHTTP2SessionHandler`).
    private var handler: Unmanaged<NGHTTP2SessionHandler>?
    /// Bytes nghttp2 currently holds through this session's allocator.
    private(set) var allocatedBytes = 0

    /// Makes `handler` hear this session's callbacks; it must outlive the session.
    func attach(_ handler: NGHTTP2SessionHandler) {
        self.handler = .passUnretained(handler)
    }

    /// A client engine for a gRPC client session: push disabled, `initialWindowSize` as our
    /// per-stream receive window, and `tune` for anything else.
    static func grpcClient(initialWindowSize: UInt32, tune: (inout Options) -> Void = { _ in })
        throws(GRPCSessionError) -> NGHTTP2Session
    {
        var options = Options()
        options.settings = [
            (Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), initialWindowSize),
            (Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), 0),
        ]
        tune(&options)
        do {
            return try NGHTTP2Session(role: .client, options: options)
        } catch {
            throw GRPCSessionError(.internalError, "cannot create the HTTP/2 client session: \(error)")
        }
    }

    init(role: Role, options: Options) throws(Failure) {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { throw Failure(code: NGHTTP2_ERR_NOMEM.rawValue) }
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.install(callbacks)

        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else { throw Failure(code: NGHTTP2_ERR_NOMEM.rawValue) }
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_closed_streams(option, 1)
        // A field value with spaces or tabs around it is taken (the session trims them), not
        // answered with RST_STREAM PROTOCOL_ERROR, which gRPC clients report as INTERNAL.
        nghttp2_option_set_no_rfc9113_leading_and_trailing_ws_validation(option, 1)
        nghttp2_option_set_max_deflate_dynamic_table_size(option, options.maxDeflateTableSize)
        nghttp2_option_set_max_outbound_ack(option, options.maxOutboundAcks)
        nghttp2_option_set_max_settings(option, options.maxSettingsEntries)
        if role == .server {
            // nghttp2's own rapid-reset limiter (Debian's CVE-2023-44487 fix: 1,000 resets, then
            // 33 a second) counts every RST_STREAM, those of calls already running too, and ends
            // the connection with INTERNAL_ERROR. The session's own limiter replaces it: it
            // counts only resets of requests not yet whole, as a reset running call keeps its
            // slot until its handler ends (`GRPCServerSession.frameReceived`).
            nghttp2_option_set_stream_reset_rate_limit(option, UInt64.max, UInt64.max)
        }
        nghttp2_option_set_peer_max_concurrent_streams(option, options.peerMaxConcurrentStreams)
        if !options.acknowledgesPings { nghttp2_option_set_no_auto_ping_ack(option, 1) }

        var memory = nghttp2_mem(mem_user_data: nil, malloc: nil, free: nil, calloc: nil, realloc: nil)
        memory.mem_user_data = Unmanaged.passUnretained(self).toOpaque()
        memory.malloc = { size, context in NGHTTP2Session.with(context) { $0.allocate(size) } }
        // nghttp2 frees many null pointers: answered before reaching the session.
        memory.free = { pointer, context in
            guard let pointer else { return }
            NGHTTP2Session.with(context) { $0.release(pointer) }
        }
        memory.calloc = { count, size, context in NGHTTP2Session.with(context) { $0.allocateZeroed(count, size) } }
        memory.realloc = { pointer, size, context in NGHTTP2Session.with(context) { $0.reallocate(pointer, size) } }

        let context = Unmanaged.passUnretained(self).toOpaque()
        var created: OpaquePointer?
        let result = switch role {
        case .server: nghttp2_session_server_new3(&created, callbacks, context, option, &memory)
        case .client: nghttp2_session_client_new3(&created, callbacks, context, option, &memory)
        }
        guard result == 0, let created else { throw Failure(code: result) }
        session = created

        let entries = options.settings.map { nghttp2_settings_entry(settings_id: $0.id, value: $0.value) }
        let settingsResult = entries.withUnsafeBufferPointer {
            nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
        }
        guard settingsResult == 0 else { throw Failure(code: settingsResult) }
        if options.connectionWindow > 65_535 {
            let windowResult = nghttp2_session_set_local_window_size(
                created, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, options.connectionWindow)
            guard windowResult == 0 else { throw Failure(code: windowResult) }
        }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    // MARK: - Bytes

    /// Feeds received bytes to nghttp2; the callbacks run inside. Returns nghttp2's result
    /// (the count consumed, or a negative error).
    func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let session, let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        return nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// Appends every frame nghttp2 has ready to `buffer`.
    func send(into buffer: inout [UInt8]) throws(Failure) {
        try send { buffer.append(contentsOf: $0) }
    }

    /// Hands every chunk of frames nghttp2 has ready to `sink`, in order; each chunk is valid
    /// only during its call.
    func send(_ sink: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
        guard let session else { return }
        while true {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 { throw Failure(code: Int32(truncatingIfNeeded: count)) }
            guard count > 0, let chunk else { return }
            sink(UnsafeRawBufferPointer(start: chunk, count: count))
        }
    }

    /// Whether nghttp2 still wants to read or to write; both false means the connection is done.
    var wantsRead: Bool { session.map { nghttp2_session_want_read($0) != 0 } ?? false }
    var wantsWrite: Bool { session.map { nghttp2_session_want_write($0) != 0 } ?? false }

    /// The highest stream id the peer opened that we processed (for GOAWAY).
    var lastProcessedStreamID: Int32 { session.map { nghttp2_session_get_last_proc_stream_id($0) } ?? 0 }

    // MARK: - Submitting frames

    /// A response's HEADERS; with `hasBody` the body comes from `handler.readData`, otherwise the
    /// HEADERS end the stream (a Trailers-Only response).
    @discardableResult
    func submitResponse(streamID: Int32, headers: [HTTP2HeaderField], hasBody: Bool) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        return HTTP2HeaderField.withNameValueArray(headers) { vector, count in
            guard hasBody else { return nghttp2_submit_response(session, streamID, vector, count, nil) }
            var provider = Self.dataProvider()
            return nghttp2_submit_response(session, streamID, vector, count, &provider)
        }
    }

    /// A response's HEADERS from prebuilt fields (see `submitResponse(streamID:headers:hasBody:)`).
    @discardableResult
    func submitResponse(streamID: Int32, headers: HTTP2StaticHeaders, hasBody: Bool) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        guard hasBody else { return nghttp2_submit_response(session, streamID, headers.nameValues, headers.count, nil) }
        var provider = Self.dataProvider()
        return nghttp2_submit_response(session, streamID, headers.nameValues, headers.count, &provider)
    }

    /// Trailers from prebuilt fields (see `submitTrailer(streamID:headers:)`).
    @discardableResult
    func submitTrailer(streamID: Int32, headers: HTTP2StaticHeaders) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        return nghttp2_submit_trailer(session, streamID, headers.nameValues, headers.count)
    }

    /// A request (client role); the body comes from `handler.readData`. Returns the new stream id
    /// or a negative error.
    func submitRequest(headers: [HTTP2HeaderField], hasBody: Bool) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        return HTTP2HeaderField.withNameValueArray(headers) { vector, count in
            guard hasBody else { return nghttp2_submit_request(session, nil, vector, count, nil, nil) }
            var provider = Self.dataProvider()
            return nghttp2_submit_request(session, nil, vector, count, &provider, nil)
        }
    }

    /// A request whose header fields are already an `nghttp2_nv` array (see `GRPCRequestHeaderBlock`),
    /// with a body from `handler.readData`. Returns the new stream id or a negative error.
    func submitRequest(nameValues: UnsafePointer<nghttp2_nv>, count: Int) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        var provider = Self.dataProvider()
        return nghttp2_submit_request(session, nil, nameValues, count, &provider, nil)
    }

    /// Trailers ending a stream whose body is done (call from `readData` or after it).
    @discardableResult
    func submitTrailer(streamID: Int32, headers: [HTTP2HeaderField]) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        return HTTP2HeaderField.withNameValueArray(headers) { vector, count in
            nghttp2_submit_trailer(session, streamID, vector, count)
        }
    }

    @discardableResult
    func submitReset(streamID: Int32, code: HTTP2ErrorCode) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        return nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, code.rawValue)
    }

    @discardableResult
    func submitGoaway(lastStreamID: Int32, code: HTTP2ErrorCode, debug: String) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        let bytes = Array(debug.utf8.prefix(256))
        return bytes.withUnsafeBufferPointer {
            nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, code.rawValue,
                                  $0.baseAddress, $0.count)
        }
    }

    /// The first GOAWAY of a graceful shutdown: last stream id 2^31-1, so nothing in flight is lost.
    @discardableResult
    func submitShutdownNotice() -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        return nghttp2_submit_shutdown_notice(session)
    }

    @discardableResult
    func submitPing(_ data: UInt64) -> Int32 {
        guard let session else { return NGHTTP2_ERR_INVALID_STATE.rawValue }
        let opaque = withUnsafeBytes(of: data.bigEndian) { Array($0) }
        return opaque.withUnsafeBufferPointer {
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress)
        }
    }

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS; until its SETTINGS came, what the session was
    /// told to assume (`Options.peerMaxConcurrentStreams`).
    var remoteMaxConcurrentStreams: UInt32 {
        guard let session else { return UInt32.max }
        return nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    /// Tells nghttp2 that a deferred stream has data again (a no-op error when it was not deferred).
    func resumeData(streamID: Int32) {
        guard let session else { return }
        _ = nghttp2_session_resume_data(session, streamID)
    }

    // MARK: - Callbacks

    /// `body` with the session of `context` (nghttp2 hands back the context it was given at
    /// creation: always this object), without retaining it: it is alive, since it called
    /// nghttp2, which calls back.
    static func with<R>(_ context: UnsafeMutableRawPointer?, _ body: (NGHTTP2Session) -> R) -> R {
        Unmanaged<NGHTTP2Session>.fromOpaque(context!)._withUnsafeGuaranteedRef(body)
    }

    /// `body` with the handler of the session of `context`, retaining neither; `otherwise` when
    /// no handler is attached.
    static func withHandler<R>(_ context: UnsafeMutableRawPointer?, otherwise: R,
                               _ body: (NGHTTP2SessionHandler) -> R) -> R {
        with(context) { session in session.handler?._withUnsafeGuaranteedRef(body) ?? otherwise }
    }

    private static func dataProvider() -> nghttp2_data_provider {
        nghttp2_data_provider(source: nghttp2_data_source(ptr: nil)) { _, streamID, buffer, length, flags, _, context in
            NGHTTP2Session.with(context) { $0.readData(streamID: streamID, buffer: buffer, length: length, flags: flags) }
        }
    }

    private func readData(streamID: Int32, buffer: UnsafeMutablePointer<UInt8>?, length: Int,
                          flags: UnsafeMutablePointer<UInt32>?) -> Int {
        guard let handler, let buffer, let flags else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let read = handler._withUnsafeGuaranteedRef {
            $0.readData(streamID: streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
        }
        switch read {
        case .deferred:
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        case .bytes(let count, let endOfData, let endStream):
            if endOfData {
                flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
                if !endStream { flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue }
            }
            return count
        }
    }

    private static func frame(_ pointer: UnsafePointer<nghttp2_frame>) -> NGHTTP2Frame {
        let header = pointer.pointee.hd
        var frame = NGHTTP2Frame(type: header.type, flags: header.flags, streamID: header.stream_id, length: header.length)
        switch frame.kind {
        case .rstStream: frame.errorCode = pointer.pointee.rst_stream.error_code
        case .goaway:
            frame.errorCode = pointer.pointee.goaway.error_code
            frame.lastStreamID = pointer.pointee.goaway.last_stream_id
            if let data = pointer.pointee.goaway.opaque_data, pointer.pointee.goaway.opaque_data_len > 0 {
                frame.debugData = UnsafeRawBufferPointer(start: data, count: min(pointer.pointee.goaway.opaque_data_len, 256))
            }
        case .ping:
            frame.pingData = withUnsafeBytes(of: pointer.pointee.ping.opaque_data) { bytes in
                bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            }
        case .headers: frame.isRequestHeaders = pointer.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        case .data: frame.dataLength = max(0, header.length - pointer.pointee.data.padlen)
        default: break
        }
        return frame
    }

    private static func install(_ callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks) { _, header, context in
            guard let header else { return 0 }
            return NGHTTP2Session.withHandler(context, otherwise: true) {
                $0.beginFrame(type: header.pointee.type, flags: header.pointee.flags,
                              streamID: header.pointee.stream_id, length: header.pointee.length)
            } ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, context in
            guard let frame else { return 0 }
            return NGHTTP2Session.withHandler(context, otherwise: true) {
                $0.beginHeaders(NGHTTP2Session.frame(frame))
            } ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, context in
            guard let frame else { return 0 }
            let verdict = NGHTTP2Session.withHandler(context, otherwise: .accept) {
                $0.header(streamID: frame.pointee.hd.stream_id,
                          name: UnsafeRawBufferPointer(start: name, count: nameLength),
                          value: UnsafeRawBufferPointer(start: value, count: valueLength))
            }
            switch verdict {
            case .accept: return 0
            case .resetStream: return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
            case .failConnection: return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            }
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, context in
            guard let frame else { return 0 }
            return NGHTTP2Session.withHandler(context, otherwise: true) {
                $0.frameReceived(NGHTTP2Session.frame(frame))
            } ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, context in
            NGHTTP2Session.withHandler(context, otherwise: true) {
                $0.dataChunk(streamID: streamID, UnsafeRawBufferPointer(start: data, count: length))
            } ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, context in
            guard let frame else { return 0 }
            NGHTTP2Session.withHandler(context, otherwise: ()) { $0.frameSent(NGHTTP2Session.frame(frame)) }
            return 0
        }
        nghttp2_session_callbacks_set_error_callback2(callbacks) { _, _, message, length, context in
            guard let message else { return 0 }
            let text = UnsafeRawBufferPointer(start: message, count: length)
            NGHTTP2Session.withHandler(context, otherwise: ()) { $0.libraryError(String(decoding: text, as: UTF8.self)) }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, context in
            NGHTTP2Session.withHandler(context, otherwise: ()) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
            return 0
        }
    }

    // MARK: - Allocator

    /// Blocks of at least this size come straight from mmap: their pages cost memory only once
    /// touched, whatever the heap did before, so an idle session pays for the page of its 16 KB
    /// frame buffer that it used and nothing for its empty stream table.
    private static let pageBackedMinimum = 4096
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// `pageSize - 1`, kept per session: a static is a lazy global, checked on every access.
    private let pageMask = NGHTTP2Session.pageSize - 1
    /// The mmap'd blocks and their mapped lengths (page-aligned pointers only).
    private var pageBacked: [UnsafeMutableRawPointer: Int] = [:]

    private func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        if size >= Self.pageBackedMinimum, let pointer = mapPages(size) { return pointer }
        let pointer = malloc(size)
        if let pointer { allocatedBytes += malloc_usable_size(pointer) }
        return pointer
    }

    private func allocateZeroed(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        if !overflow, total >= Self.pageBackedMinimum, let pointer = mapPages(total) { return pointer }  // zero-filled
        let pointer = calloc(count, size)
        if let pointer { allocatedBytes += malloc_usable_size(pointer) }
        return pointer
    }

    private func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size) }
        let oldSize = blockSize(pointer)
        if pageBacked[pointer] == nil, size < Self.pageBackedMinimum {
            guard let moved = realloc(pointer, size) else { return nil }
            allocatedBytes += malloc_usable_size(moved) - oldSize
            return moved
        }
        if let mapped = pageBacked[pointer], size <= mapped { return pointer }
        guard let moved = allocate(size) else { return nil }
        moved.copyMemory(from: pointer, byteCount: min(oldSize, size))
        release(pointer)
        return moved
    }

    private func release(_ pointer: UnsafeMutableRawPointer) {
        if Int(bitPattern: pointer) & pageMask == 0, let mapped = pageBacked.removeValue(forKey: pointer) {
            munmap(pointer, mapped)
            allocatedBytes -= mapped
            return
        }
        allocatedBytes -= malloc_usable_size(pointer)
        free(pointer)
    }

    /// The usable size of a block from this allocator.
    private func blockSize(_ pointer: UnsafeMutableRawPointer) -> Int {
        if Int(bitPattern: pointer) & pageMask == 0, let mapped = pageBacked[pointer] { return mapped }
        return malloc_usable_size(pointer)
    }

    /// Fresh zero-filled pages for `size` bytes, or nil (the caller falls back to malloc).
    private func mapPages(_ size: Int) -> UnsafeMutableRawPointer? {
        let length = (size + Self.pageSize - 1) / Self.pageSize * Self.pageSize
        guard let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              pointer != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        pageBacked[pointer] = length
        allocatedBytes += length
        return pointer
    }
}
