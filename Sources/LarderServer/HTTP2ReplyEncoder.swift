import LarderHTTP2
import LarderWire

/// Replies of gRPC-over-HTTP/2 calls, made on the store threads.
///
/// HTTP/2 output must go through the connection's nghttp2 session on the loop (HPACK,
/// stream state, flow control), so a store thread cannot frame it. It packs the result
/// into a small record instead, which `HTTP2Link.apply` hands to the session on the loop:
/// `0` + the response message with its gRPC prefix (a unary call's reply, then status OK),
/// `1` + status code (4 bytes, big-endian) + the UTF-8 message (an error), `2` + a stream
/// message with its gRPC prefix, `3` (OK end). A message is framed here, on the store thread,
/// so the loop queues the record itself on its stream, without another copy.
struct HTTP2ReplyEncoder: ReplyEncoder {
    enum Kind: UInt8 {
        case reply = 0, error = 1, streamMessage = 2, end = 3
    }

    func reply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: [UInt8], refusal: RPCError?) {
        switch result {
        case .success(let payload): (Self.framed(.reply, payload), nil)
        case .failure(let error): (Self.error(error), nil)
        }
    }

    func streamMessage(callID: UInt64, payload: [UInt8]) -> [UInt8] {
        Self.framed(.streamMessage, payload)
    }

    func streamEnd(callID: UInt64, error: RPCError?) -> [UInt8] {
        error.map(Self.error) ?? [Kind.end.rawValue]
    }

    /// `kind`, then `payload` as one gRPC message (prefix included).
    static func framed(_ kind: Kind, _ payload: [UInt8]) -> [UInt8] {
        var record: [UInt8] = []
        record.reserveCapacity(1 + GRPCMessageFraming.prefixSize + payload.count)
        record.append(kind.rawValue)
        GRPCMessageFraming.appendPrefix(count: payload.count, to: &record)
        record += payload
        return record
    }

    static func error(_ error: RPCError) -> [UInt8] {
        let code = UInt32(bitPattern: error.code.rawValue)
        return [Kind.error.rawValue, UInt8(code >> 24), UInt8((code >> 16) & 0xFF), UInt8((code >> 8) & 0xFF),
                UInt8(code & 0xFF)] + Array(error.message.utf8)
    }
}
