@testable import LarderHTTP2
import LarderWire
import LarderSystem

/// A client and a server session joined in memory: `pump` moves bytes both ways until both
/// are quiet, collecting the server's events.
final class Loopback {
    let server: GRPCServerSession
    let client: GRPCClientSession
    var events: [GRPCServerEvent] = []
    /// What `server.receive` threw, if anything.
    var serverError: GRPCSessionError?
    /// Every byte the client sent and the server sent, in order.
    var clientBytes: [UInt8] = []
    var serverBytes: [UInt8] = []

    init(server configuration: GRPCServerConfiguration = GRPCServerConfiguration(),
         client options: GRPCClientSession.Options = GRPCClientSession.Options()) throws {
        server = try GRPCServerSession(configuration: configuration)
        client = try GRPCClientSession(options: options)
    }

    /// Client to server once; returns the bytes moved.
    @discardableResult
    func clientToServer() throws -> Int {
        var bytes: [UInt8] = []
        try client.writeOutput(into: &bytes)
        clientBytes += bytes
        if !bytes.isEmpty && serverError == nil {
            do { events += try server.receive(bytes) } catch { serverError = error }
        }
        return bytes.count
    }

    /// Server to client once; returns the bytes moved.
    @discardableResult
    func serverToClient() throws -> Int {
        var bytes: [UInt8] = []
        events += try server.writeOutput(into: &bytes)
        serverBytes += bytes
        if !bytes.isEmpty { try client.receive(bytes) }
        return bytes.count
    }

    /// Moves bytes until neither side has any to send (bounded).
    func pump(maxTurns: Int = 10_000) throws {
        for _ in 0..<maxTurns {
            let moved = try clientToServer() + serverToClient()
            if moved == 0 { return }
        }
    }

    /// Removes and returns the events so far.
    func takeEvents() -> [GRPCServerEvent] {
        defer { events = [] }
        return events
    }

    /// The heads of the calls started so far.
    var startedHeads: [GRPCRequestHead] {
        events.compactMap { if case .requestStarted(let head) = $0 { head } else { nil } }
    }

    /// A one-message call: headers, the message, half-close; pumped.
    @discardableResult
    func call(_ path: String = "/larder.v1.Test/Echo", extra: [(String, String)] = [], message: [UInt8] = [1, 2, 3],
              contentType: String = "application/grpc") throws -> Int32 {
        let headers = GRPCClientSession.requestHeaders(path: path, extra: extra, contentType: contentType)
        guard let streamID = client.startCall(headers: headers) else { throw GRPCSessionError(.internalError, "no stream") }
        client.sendMessage(streamID: streamID, message)
        client.endInput(streamID: streamID)
        try pump()
        return streamID
    }
}

/// HTTP/2 frames built by hand (RFC 9113 §4.1), for inputs a well-behaved client never sends.
enum RawFrames {
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        let id = UInt32(stream)
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
                UInt8(id >> 24 & 0x7F), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)] + payload
    }

    /// The preface and an empty SETTINGS frame.
    static let start = HTTP2Preface.bytes + frame(4)

    /// An HPACK literal header field without indexing, new name (RFC 7541 §6.2.2), short strings.
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00] + length(name.utf8.count) + Array(name.utf8) + length(value.utf8.count) + Array(value.utf8)
    }

    /// An HPACK string length with the Huffman bit clear (7-bit prefix integer).
    static func length(_ count: Int) -> [UInt8] {
        guard count >= 127 else { return [UInt8(count)] }
        var rest = count - 127
        var bytes: [UInt8] = [127]
        while rest >= 128 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        return bytes + [UInt8(rest)]
    }

    /// The header block of a well-formed gRPC request.
    static func request(path: String = "/larder.v1.Test/Echo") -> [UInt8] {
        literal(":method", "POST") + literal(":scheme", "http") + literal(":path", path)
            + literal(":authority", "localhost") + literal("content-type", "application/grpc")
    }
}

/// A frame found in a byte stream.
struct ScannedFrame {
    var type: UInt8
    var flags: UInt8
    var stream: Int32
    var payload: [UInt8]
}

/// Splits a byte stream into frames (skipping the client preface when it starts with one).
func scanFrames(_ bytes: [UInt8]) -> [ScannedFrame] {
    var offset = bytes.starts(with: HTTP2Preface.bytes) ? HTTP2Preface.bytes.count : 0
    var frames: [ScannedFrame] = []
    while bytes.count - offset >= 9 {
        let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
        guard bytes.count - offset - 9 >= length else { break }
        let stream = Int32(bitPattern: UInt32(bytes[offset + 5] & 0x7F) << 24 | UInt32(bytes[offset + 6]) << 16
            | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8]))
        frames.append(ScannedFrame(type: bytes[offset + 3], flags: bytes[offset + 4], stream: stream,
                                   payload: Array(bytes[(offset + 9)..<(offset + 9 + length)])))
        offset += 9 + length
    }
    return frames
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let time = LockedValue<UInt64>(1_000_000_000)
    var now: UInt64 { time.withLock { $0 } }
    func advance(seconds: Double) { time.withLock { $0 += UInt64(seconds * 1e9) } }
}

extension GRPCServerConfiguration {
    /// A configuration on a clock the test moves.
    static func manual(_ clock: ManualClock) -> GRPCServerConfiguration {
        var configuration = GRPCServerConfiguration()
        configuration.clock = { clock.now }
        return configuration
    }
}
