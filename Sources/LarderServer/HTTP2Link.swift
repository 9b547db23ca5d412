import LarderHTTP2
import LarderSystem
import LarderWire

/// The gRPC-over-HTTP/2 side of one connection: its nghttp2 session and the calls whose
/// request is still arriving. Loop thread only (owned by its `Connection`).
///
/// A unary call starts in the `CallCore` when its stream half-closes with exactly one
/// request message; its reply comes back through `answer` (answered on the loop) or
/// `apply` (a record `HTTP2ReplyEncoder` made on a store thread).
final class HTTP2Link {
    let session: GRPCServerSession

    /// A request whose message or end has not arrived yet.
    struct Pending {
        var head: GRPCRequestHead
        var message: [UInt8]?
        var messages = 0
    }

    private(set) var pending: [Int32: Pending] = [:]
    /// Streams whose call is in the core (so a reset cancels it there).
    private(set) var started: Set<Int32> = []

    init(configuration: GRPCServerConfiguration) throws(GRPCSessionError) {
        session = try GRPCServerSession(configuration: configuration)
    }

    /// What the core must do for one event; the session's own bookkeeping is done here.
    enum Action {
        case start(GRPCRequestHead, [UInt8])
        case cancel(UInt64)
    }

    func handle(_ event: GRPCServerEvent) -> Action? {
        switch event {
        case .requestStarted(let head):
            pending[head.streamID] = Pending(head: head)
            return nil
        case .message(let streamID, let bytes):
            guard var call = pending[streamID] else { return nil }
            call.messages += 1
            call.message = bytes
            pending[streamID] = call
            if call.messages > 1 {
                pending[streamID] = nil
                session.sendTrailers(streamID: streamID, status: .internal,
                                     message: "\(call.head.path) is unary: send exactly one request message")
            }
            return nil
        case .endOfInput(let streamID):
            guard let call = pending.removeValue(forKey: streamID) else { return nil }
            guard let message = call.message else {
                session.sendTrailers(streamID: streamID, status: .internal,
                                     message: "the request ended without a message: \(call.head.path) takes one")
                return nil
            }
            started.insert(streamID)
            return .start(call.head, message)
        case .cancelled(let streamID, _):
            pending[streamID] = nil
            guard started.remove(streamID) != nil else { return nil }
            return .cancel(UInt64(streamID))
        }
    }

    /// Ends call `callID` with `result`, answered on the loop.
    func answer(callID: UInt64, result: Result<[UInt8], RPCError>) {
        let streamID = Int32(truncatingIfNeeded: callID)
        started.remove(streamID)
        switch result {
        case .success(let payload):
            session.sendMessage(streamID: streamID, payload)
            session.sendTrailers(streamID: streamID, status: .ok)
        case .failure(let error):
            session.sendTrailers(streamID: streamID, status: error.code, message: error.message)
        }
    }

    /// Applies a record `HTTP2ReplyEncoder` made for call `callID`.
    func apply(_ record: [UInt8], callID: UInt64, isFinal: Bool) {
        let streamID = Int32(truncatingIfNeeded: callID)
        if isFinal { started.remove(streamID) }
        guard let first = record.first, let kind = HTTP2ReplyEncoder.Kind(rawValue: first) else { return }
        let body = Array(record.dropFirst())
        switch kind {
        case .reply:
            answer(callID: callID, result: .success(body))
        case .streamMessage:
            session.sendMessage(streamID: streamID, body)
        case .end:
            session.sendTrailers(streamID: streamID, status: .ok)
        case .error:
            guard body.count >= 4 else { return }
            let raw = UInt32(body[0]) << 24 | UInt32(body[1]) << 16 | UInt32(body[2]) << 8 | UInt32(body[3])
            answer(callID: callID, result: .failure(RPCError(StatusCode(rawValue: Int32(bitPattern: raw)),
                                                             String(decoding: body.dropFirst(4), as: UTF8.self))))
        }
    }

    /// The metadata as the core reads it: text values by name (the last of a repeated name).
    static func coreMetadata(_ metadata: GRPCMetadata) -> [String: String] {
        var result: [String: String] = [:]
        for entry in metadata.entries {
            if case .text(let value) = entry.value { result[entry.name] = value }
        }
        return result
    }
}
