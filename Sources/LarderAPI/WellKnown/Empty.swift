public import CLarderProto
import CProtobufC
public import LarderWire

/// `google.protobuf.Empty`, the reply of Delete methods.
public struct Empty: Hashable, Sendable, ProtoMessage {
    public init() {}

    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        google__protobuf__empty__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    /// Reads an Empty field (there is nothing to read).
    init(c: UnsafePointer<Google__Protobuf__Empty>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Google__Protobuf__Empty> {
        arena.message(Google__Protobuf__Empty.self) { google__protobuf__empty__init($0) }
    }
}
