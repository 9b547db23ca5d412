import CLarderProto
import CProtobufC

/// Encodes framed ResponseEnvelopes straight into an output buffer, without
/// copying the payload into an intermediate message first (the server's hot path).
public enum ResponseFrame {
    /// Appends one frame: length prefix + ResponseEnvelope{callID, code, message, payload}.
    ///
    /// A reply whose envelope would exceed `maxSize` (the 4 MiB every client accepts by
    /// default; never more than the prefix holds) is replaced by a RESOURCE_EXHAUSTED
    /// reply for the same call (`tooLargeMessage`): a client would otherwise drop the whole
    /// connection. Returns that refusal, or nil when the reply went as given: what the server
    /// counts and logs for the call must be what the client gets.
    @discardableResult
    public static func append(callID: UInt64, code: StatusCode, message: String, payload: [UInt8],
                              maxSize: Int = Frame.defaultMaxSize, to buffer: inout [UInt8]) -> RPCError? {
        let tooLarge: Int? = message.withCString { messagePointer in
            payload.withUnsafeBufferPointer { payloadPointer in
                var envelope = Larder__Rpc__V1__ResponseEnvelope()
                larder__rpc__v1__response_envelope__init(&envelope)
                envelope.call_id = callID
                envelope.status_code = code.rawValue
                envelope.status_message = message.isEmpty ? nil : UnsafeMutablePointer(mutating: messagePointer)
                envelope.payload = ProtobufCBinaryData(
                    len: payloadPointer.count, data: payloadPointer.count == 0 ? nil : UnsafeMutablePointer(mutating: payloadPointer.baseAddress))
                return withUnsafePointer(to: &envelope) { pointer -> Int? in
                    let message = UnsafeRawPointer(pointer).assumingMemoryBound(to: ProtobufCMessage.self)
                    let size = protobuf_c_message_get_packed_size(message)
                    guard let length = FrameLength(exactly: size, limit: maxSize) else { return size }
                    Frame.appendHeader(length: length, to: &buffer)
                    ProtoCodec.pack(message, size: size, appendingTo: &buffer)
                    return nil
                }
            }
        }
        guard let tooLarge else { return nil }
        let refusal = RPCError(.resourceExhausted, tooLargeMessage(replyBytes: tooLarge, limit: maxSize))
        append(callID: callID, code: refusal.code, message: refusal.message, payload: [], maxSize: max(maxSize, 4096),
               to: &buffer)
        return refusal
    }

    /// At most how many bytes `append(callID:result:to:)` adds for `result`.
    public static func maximumSize(of result: Result<[UInt8], RPCError>) -> Int {
        // The frame's header, then each field's key and length: call_id and status_code as
        // varints of up to 10 bytes, status_message's and payload's lengths up to 5.
        let framing = 4 + (1 + 10) + (1 + 10) + (1 + 5) + (1 + 5)
        switch result {
        case .success(let payload) where payload.count <= Frame.defaultMaxSize:
            return framing + payload.count
        case .success(let payload):  // refused: `append` sends RESOURCE_EXHAUSTED instead
            return framing + tooLargeMessage(replyBytes: payload.count, limit: Frame.defaultMaxSize).utf8.count
        case .failure(let error):
            return framing + error.message.utf8.count
        }
    }

    /// `append` of a call's result: its payload with OK, or its error's status.
    @discardableResult
    public static func append(callID: UInt64, result: Result<[UInt8], RPCError>, to buffer: inout [UInt8]) -> RPCError? {
        switch result {
        case .success(let payload):
            append(callID: callID, code: .ok, message: "", payload: payload, to: &buffer)
        case .failure(let error):
            append(callID: callID, code: error.code, message: error.message, payload: [], to: &buffer)
        }
    }

    /// Why a reply of `replyBytes` was not sent, and what the client can do. Only a whole
    /// list (`page_size` 0) or a group with its categories gets here (a page of a list ends
    /// early instead, below 4 MiB), and the limit is what clients accept, not
    /// `--max-frame-bytes` (which bounds requests), so the operator cannot raise it.
    public static func tooLargeMessage(replyBytes: Int, limit: Int) -> String {
        "the reply is \(replyBytes) bytes, more than the \(limit) bytes a reply frame may hold (what every client accepts; "
            + "--max-frame-bytes bounds requests, not this): ask for less, with a page_size on a List call "
            + "(then follow next_page_token) or GetCategoryGroup without include_item_categories, delete what you "
            + "no longer need, or call it with gRPC over HTTP/2, whose clients can accept larger messages"
    }

    /// One framed reply for `result` (payload on success, status on failure), and the refusal
    /// it carries instead when the payload did not fit (see `append`).
    public static func encode(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: [UInt8], refusal: RPCError?) {
        var buffer: [UInt8] = []
        if case .success(let payload) = result { buffer.reserveCapacity(payload.count + 24) }
        let refusal = append(callID: callID, result: result, to: &buffer)
        return (buffer, refusal)
    }
}
