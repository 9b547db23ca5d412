import CLarderProto
import CProtobufC
import LarderWire

/// `google.protobuf.Empty`, the reply of Delete methods.
public struct Empty: Hashable, Sendable, ProtoMessage {
    public init() {}

    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        google__protobuf__empty__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        arena.message(Google__Protobuf__Empty.self) { google__protobuf__empty__init($0) }.asMessage
    }
}
