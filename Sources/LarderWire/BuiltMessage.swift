package import CProtobufC

/// The C form of a message that `ProtoMessage.build(in:)` laid out in a
/// `CArena`: valid as long as the arena, until it is reset.
public struct BuiltMessage {
    /// The protobuf-c message.
    package let pointer: UnsafeMutablePointer<ProtobufCMessage>

    /// A generated C struct (which starts with its `ProtobufCMessage` header) as a built message.
    package init<T>(_ message: UnsafeMutablePointer<T>) {
        pointer = UnsafeMutableRawPointer(message).assumingMemoryBound(to: ProtobufCMessage.self)
    }

    /// The message's type.
    public var descriptor: MessageDescriptor { MessageDescriptor(pointer.pointee.descriptor) }
}
