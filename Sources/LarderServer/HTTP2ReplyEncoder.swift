import LarderWire

/// Replies of gRPC-over-HTTP/2 calls, made on the store threads.
///
/// HTTP/2 output must go through the connection's nghttp2 session on the loop (HPACK,
/// stream state, flow control), so a store thread cannot frame it. It packs the result
/// into a small record instead, which `HTTP2Link.apply` hands to the session on the loop:
/// `0` + the response message (a unary call's reply, then status OK), `1` + status code
/// (4 bytes, big-endian) + the UTF-8 message (an error), `2` + a stream message, `3` (OK end).
struct HTTP2ReplyEncoder: ReplyEncoder {
    enum Kind: UInt8 {
        case reply = 0, error = 1, streamMessage = 2, end = 3
    }

    func reply(callID: UInt64, result: Result<[UInt8], RPCError>) -> [UInt8] {
        switch result {
        case .success(let payload): [Kind.reply.rawValue] + payload
        case .failure(let error): Self.error(error)
        }
    }

    func streamMessage(callID: UInt64, payload: [UInt8]) -> [UInt8] {
        [Kind.streamMessage.rawValue] + payload
    }

    func streamEnd(callID: UInt64, error: RPCError?) -> [UInt8] {
        error.map(Self.error) ?? [Kind.end.rawValue]
    }

    static func error(_ error: RPCError) -> [UInt8] {
        let code = UInt32(bitPattern: error.code.rawValue)
        return [Kind.error.rawValue, UInt8(code >> 24), UInt8((code >> 16) & 0xFF), UInt8((code >> 8) & 0xFF),
                UInt8(code & 0xFF)] + Array(error.message.utf8)
    }
}
