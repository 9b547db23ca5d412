#if canImport(Glibc)
import Glibc
#endif
public import LarderHTTP2
import LarderWire
import Synchronization

/// A gRPC-over-HTTP/2 client on a real loopback socket: `GRPCClientSession` for the protocol,
/// blocking reads with a short poll. Thread-safe (a lock around the session), so one task may
/// wait on it while another starts or resets calls; every blocking method must run off the
/// cooperative pool (`offThePool`).
public final class HTTP2TestClient: Sendable {
    private let connection: RawConnection
    private let session: Mutex<GRPCClientSession>

    public init(port: UInt16, options: GRPCClientSession.Options = GRPCClientSession.Options()) throws {
        connection = try RawConnection(port: port)
        let session = try GRPCClientSession(options: options)
        self.session = Mutex(session)
        flush()
    }

    /// Opens a call to `path`, queues `messages`, and half-closes unless `endInput` is false.
    public func start(_ path: String, extra: [(String, String)] = [], messages: [[UInt8]] = [],
               endInput: Bool = true) throws -> Int32 {
        let streamID = session.withLock { session -> Int32? in
            guard let id = session.startCall(headers: GRPCClientSession.requestHeaders(path: path, extra: extra))
            else { return nil }
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

    public func reset(_ streamID: Int32) {
        session.withLock { $0.reset(streamID: streamID) }
        flush()
    }

    /// The response of `streamID` so far.
    public func response(_ streamID: Int32) -> GRPCClientSession.Response? { session.withLock { $0.responses[streamID] } }

    /// Reads from the server until `condition` holds for `streamID`'s response (or `seconds`
    /// pass, or the server closes); returns the response then.
    @discardableResult
    public func read(_ streamID: Int32, seconds: Int = 60,
              until condition: (GRPCClientSession.Response) -> Bool) -> GRPCClientSession.Response? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            if let response = response(streamID), condition(response) { return response }
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { connection.receiveSome(into: $0) }
            if count <= 0 { break }
            let bytes = Array(buffer[0..<count])
            session.withLock { try? $0.receive(bytes) }
            flush()  // WINDOW_UPDATE, SETTINGS and PING acknowledgements
        }
        return response(streamID)
    }

    /// The GOAWAY frames the server sent so far.
    public var goaways: [HTTP2Goaway] { session.withLock { $0.goaways } }

    /// Reads (answering what the protocol asks) until the server closes the connection or
    /// `seconds` pass; true when it closed.
    public func readUntilClosed(seconds: Int) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { connection.receiveSome(into: $0) }
            if count == 0 { return true }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
            let bytes = Array(buffer[0..<count])
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
