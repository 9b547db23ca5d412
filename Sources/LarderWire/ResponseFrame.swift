import CLarderProto
import CProtobufC

/// Encodes framed ResponseEnvelopes straight into an output buffer, without
/// copying the payload into an intermediate message first (the server's hot path).
public enum ResponseFrame {
    /// Appends one frame: length prefix + ResponseEnvelope{callID, code, message, payload}.
    public static func append(callID: UInt64, code: StatusCode, message: String, payload: [UInt8],
                              to buffer: inout [UInt8]) {
        var envelope = Larder__Rpc__V1__ResponseEnvelope()
        larder__rpc__v1__response_envelope__init(&envelope)
        envelope.call_id = callID
        envelope.status_code = code.rawValue
        message.withCString { messagePointer in
            payload.withUnsafeBufferPointer { payloadPointer in
                envelope.status_message = message.isEmpty ? nil : UnsafeMutablePointer(mutating: messagePointer)
                envelope.payload = ProtobufCBinaryData(
                    len: payloadPointer.count, data: payloadPointer.count == 0 ? nil : UnsafeMutablePointer(mutating: payloadPointer.baseAddress))
                withUnsafePointer(to: &envelope) { pointer in
                    let message = UnsafeRawPointer(pointer).assumingMemoryBound(to: ProtobufCMessage.self)
                    let size = protobuf_c_message_get_packed_size(message)
                    Frame.appendHeader(length: size, to: &buffer)
                    ProtoCodec.pack(message, size: size, appendingTo: &buffer)
                }
            }
        }
    }

    /// One framed reply for `result` (payload on success, status on failure).
    public static func encode(callID: UInt64, result: Result<[UInt8], RPCError>) -> [UInt8] {
        var buffer: [UInt8] = []
        switch result {
        case .success(let payload):
            buffer.reserveCapacity(payload.count + 24)
            append(callID: callID, code: .ok, message: "", payload: payload, to: &buffer)
        case .failure(let error):
            append(callID: callID, code: error.code, message: error.message, payload: [], to: &buffer)
        }
        return buffer
    }
}
