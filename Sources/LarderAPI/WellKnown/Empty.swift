import CLarderProto
import CProtobufC
public import LarderWire

/// `google.protobuf.Empty`, the reply of Delete methods.
public struct Empty: Hashable, Sendable, ProtoMessage {
    public init() {}

    public static var descriptor: MessageDescriptor {
        MessageDescriptor(google__protobuf__empty__descriptor_ptr())
    }

    public init(unpacked message: UnpackedMessage) throws(RPCError) {}

    /// Reads an Empty field (there is nothing to read).
    init(c: UnsafePointer<Google__Protobuf__Empty>) throws(RPCError) {}

    public func build(in arena: CArena) -> BuiltMessage { BuiltMessage(buildC(in: arena)) }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Google__Protobuf__Empty> {
        arena.message(Google__Protobuf__Empty.self) { google__protobuf__empty__init($0) }
    }
}
