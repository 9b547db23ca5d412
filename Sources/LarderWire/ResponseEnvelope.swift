import CLarderProto
import CProtobufC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The reply to one call (`larder.rpc.v1.ResponseEnvelope`). Call id 0 marks a
/// connection-level error sent just before the server closes the connection.
public struct ResponseEnvelope: Hashable, Sendable {
    public var callID: UInt64
    public var statusCode: StatusCode
    public var statusMessage: String
    /// The encoded response message; empty unless the status is OK.
    public var payload: [UInt8]

    public init(callID: UInt64, statusCode: StatusCode = .ok, statusMessage: String = "", payload: [UInt8] = []) {
        self.callID = callID
        self.statusCode = statusCode
        self.statusMessage = statusMessage
        self.payload = payload
    }

    /// A failed reply carrying `error`.
    public init(callID: UInt64, error: RPCError) {
        self.init(callID: callID, statusCode: error.code, statusMessage: error.message)
    }

    /// The error this reply carries, or nil when it is OK.
    public var error: RPCError? {
        statusCode == .ok ? nil : RPCError(statusCode, statusMessage)
    }
}

extension ResponseEnvelope {
    /// A reply as a client reads it: `ProtoCodec.decode`, except that a status message that is
    /// not valid UTF-8, or holds a NUL byte, does not fail the reply. Its bad bytes become
    /// U+FFFD and it ends at the NUL, saying so, so the server's code still reaches the caller
    /// (a hostile or broken server's INVALID_ARGUMENT had become the client's INTERNAL).
    /// - Throws: what `ProtoCodec.decode` throws, when the bytes are no envelope at all.
    public static func decodeReply(from bytes: [UInt8]) throws(RPCError) -> ResponseEnvelope {
        let strict: RPCError
        do throws(RPCError) {
            return try ProtoCodec.decode(ResponseEnvelope.self, from: bytes)
        } catch {
            strict = error
        }
        let mended = bytes.withUnsafeBytes { raw -> ResponseEnvelope? in
            guard let data = raw.baseAddress?.assumingMemoryBound(to: UInt8.self),
                  let message = protobuf_c_message_unpack(descriptor.pointer, nil, raw.count, data) else { return nil }
            defer { protobuf_c_message_free_unpacked(message, nil) }
            let c = UnsafeRawPointer(message).assumingMemoryBound(to: Larder__Rpc__V1__ResponseEnvelope.self).pointee
            var text = c.status_message.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
            if StringFieldScan.fieldWithNUL(in: raw, of: descriptor.pointer) != nil {
                text += " [the server's message went on after a NUL byte, not shown]"
            }
            return ResponseEnvelope(c, statusMessage: text)
        }
        guard let mended else { throw strict }
        return mended
    }
}

extension ResponseEnvelope: ProtoMessage {
    public static var descriptor: MessageDescriptor {
        MessageDescriptor(larder__rpc__v1__response_envelope__descriptor_ptr())
    }

    public init(unpacked message: UnpackedMessage) throws(RPCError) {
        let c = message.cast(to: Larder__Rpc__V1__ResponseEnvelope.self).pointee
        self.init(c, statusMessage: try CFields.string(c.status_message, field: "status_message"))
    }

    /// The envelope `c` holds, with its status message read already (strictly, or as
    /// `decodeReply` mends it).
    private init(_ c: Larder__Rpc__V1__ResponseEnvelope, statusMessage: String) {
        self.init(callID: c.call_id, statusCode: StatusCode(rawValue: c.status_code), statusMessage: statusMessage,
                  payload: CFields.bytes(c.payload))
    }

    public func build(in arena: CArena) -> BuiltMessage {
        let c = arena.message(Larder__Rpc__V1__ResponseEnvelope.self) { larder__rpc__v1__response_envelope__init($0) }
        c.pointee.call_id = callID
        c.pointee.status_code = statusCode.rawValue
        c.pointee.status_message = arena.string(statusMessage)
        c.pointee.payload = arena.bytes(payload)
        return BuiltMessage(c)
    }
}
