import CLarderProto
import CProtobufC

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

extension ResponseEnvelope: ProtoMessage {
    public static var descriptor: MessageDescriptor {
        MessageDescriptor(larder__rpc__v1__response_envelope__descriptor_ptr())
    }

    public init(unpacked message: UnpackedMessage) throws(RPCError) {
        let c = message.cast(to: Larder__Rpc__V1__ResponseEnvelope.self).pointee
        callID = c.call_id
        statusCode = StatusCode(rawValue: c.status_code)
        statusMessage = try CFields.string(c.status_message, field: "status_message")
        payload = CFields.bytes(c.payload)
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
