#if canImport(Glibc)
import Glibc
#endif
public import LarderHTTP2
import LarderWire
import LarderSystem

/// A gRPC-over-HTTP/2 client on a real loopback socket: `GRPCClientSession` for the protocol,
/// blocking reads with a short poll. Thread-safe (a lock around the session), so one task may
/// wait on it while another starts or resets calls; every blocking method must run off the
/// cooperative pool (`offThePool`).
public final class HTTP2TestClient: Sendable {
    private let connection: RawConnection
    private let session: LockedValue<GRPCClientSession>
    private let receivedBytes = LockedValue<[UInt8]>([])

    public init(port: UInt16, options: GRPCClientSession.Options = GRPCClientSession.Options()) throws {
        connection = try RawConnection(port: port)
        let session = try GRPCClientSession(options: options)
        self.session = LockedValue(session)
        flush()
    }

    /// Opens a call to `path`, queues `messages`, and half-closes unless `endInput` is false.
    public func start(_ path: String, extra: [(String, String)] = [], messages: [[UInt8]] = [],
                      endInput: Bool = true, contentType: String = "application/grpc") throws -> Int32 {
        let streamID = session.withLock { session -> Int32? in
            let headers = GRPCClientSession.requestHeaders(path: path, extra: extra, contentType: contentType)
            guard let id = session.startCall(headers: headers) else { return nil }
            for message in messages { session.sendMessage(streamID: id, message) }
            if endInput { session.endInput(streamID: id) }
            return id
        }
        guard let streamID else { throw RPCError.internalError("no stream id left") }
        flush()
        return streamID
    }

    public func send(_ message: [UInt8], on streamID: Int32) {
        session.withLock { $0.sendMessage(streamID: streamID, message) }
        flush()
    }

    public func endInput(_ streamID: Int32) {
        session.withLock { $0.endInput(streamID: streamID) }
        flush()
    }

    /// Makes the close (when the client is released) a TCP reset, as a process that dies does.
    public func resetOnClose() { connection.resetOnClose() }

    /// Shuts down the sending side of the socket (TCP FIN); the server's frames still arrive.
    public func shutdownSending() { connection.shutdownSending() }

    public func reset(_ streamID: Int32) {
        session.withLock { $0.reset(streamID: streamID) }
        flush()
    }

    /// Opens `count` calls to `path` and resets each (RST_STREAM `CANCEL`) right after its
    /// HEADERS, all in one write: the server reads them together, as from a client whose calls'
    /// deadlines all expire at once, or from a rapid-reset attacker.
    public func startAndReset(_ path: String, count: Int) throws {
        let bytes = try session.withLock { session throws -> [UInt8] in
            var bytes: [UInt8] = []
            for _ in 0..<count {
                guard let id = session.startCall(headers: GRPCClientSession.requestHeaders(path: path)) else {
                    throw RPCError.internalError("no stream id left")
                }
                try session.writeOutput(into: &bytes)  // the HEADERS first: a reset would cancel them unsent
                session.reset(streamID: id, code: .cancel)
                try session.writeOutput(into: &bytes)
            }
            return bytes
        }
        connection.send(bytes)
    }

    /// The response of `streamID` so far.
    public func response(_ streamID: Int32) -> GRPCClientSession.Response? { session.withLock { $0.responses[streamID] } }

    /// Reads from the server until `condition` holds for `streamID`'s response (or `seconds`
    /// pass, or the server closes); returns the response then.
    @discardableResult
    public func read(_ streamID: Int32, seconds: Int = 60,
              until condition: (GRPCClientSession.Response) -> Bool) -> GRPCClientSession.Response? {
        readUntil(seconds: seconds) { response(streamID).map(condition) ?? false }
        return response(streamID)
    }

    /// Reads from the server until `condition` holds (or `seconds` pass, or the server
    /// closes); returns whether it held.
    @discardableResult
    public func read(seconds: Int, until condition: () -> Bool) -> Bool {
        readUntil(seconds: seconds, condition)
        return condition()
    }

    /// The GOAWAY frames the server sent so far, as the session took them (nghttp2 takes no
    /// frame after a GOAWAY that leaves no stream open: see `goawaysOnTheWire`).
    public var goaways: [HTTP2Goaway] { session.withLock { $0.goaways } }

    /// Every GOAWAY frame among the bytes read so far, read from the frame headers (RFC 9113
    /// §4.1, §6.8) whatever the session made of them.
    public var goawaysOnTheWire: [HTTP2Goaway] {
        var goaways: [HTTP2Goaway] = []
        forEachFrameReceived { type, _, payload in
            guard type == 7, payload.count >= 8 else { return }
            let word = { (at: Int) in (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(payload[payload.startIndex + at + $1]) } }
            goaways.append(HTTP2Goaway(lastStreamID: Int32(word(0) & 0x7FFF_FFFF), code: HTTP2ErrorCode(rawValue: word(4))))
        }
        return goaways
    }

    /// The PING frames the server sent so far (not its acknowledgements of ours), from the wire.
    public var pingsReceived: Int {
        var count = 0
        forEachFrameReceived { type, flags, _ in if type == 6 && flags & 1 == 0 { count += 1 } }
        return count
    }

    /// Calls `body` with the type, flags and payload of each whole frame read so far.
    private func forEachFrameReceived(_ body: (UInt8, UInt8, ArraySlice<UInt8>) -> Void) {
        let bytes = receivedBytes.withLock { $0 }
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset - 9 >= length else { break }
            body(bytes[offset + 3], bytes[offset + 4], bytes[(offset + 9)..<(offset + 9 + length)])
            offset += 9 + length
        }
    }

    /// Reads (answering what the protocol asks) until the server closes the connection or
    /// `seconds` pass; true when it closed.
    public func readUntilClosed(seconds: Int) -> Bool {
        readUntil(seconds: seconds) { false }
    }

    /// Reads, feeding the session and sending what it answers (WINDOW_UPDATE, SETTINGS and PING
    /// acknowledgements), until `done` holds, `seconds` pass or the server closes; true when the
    /// server closed (end of stream, or an error other than the receive timeout).
    @discardableResult
    private func readUntil(seconds: Int, _ done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            if done() { return false }
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { connection.receiveSome(into: $0) }
            if count == 0 { return true }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
            let bytes = Array(buffer[0..<count])
            receivedBytes.withLock { $0 += bytes }
            session.withLock { try? $0.receive(bytes) }
            flush()
        }
        return false
    }

    private func flush() {
        var bytes: [UInt8] = []
        session.withLock { try? $0.writeOutput(into: &bytes) }
        if !bytes.isEmpty { connection.send(bytes) }
    }
}
