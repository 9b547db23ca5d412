package import CProtobufC

/// A message protobuf-c unpacked, handed to `ProtoMessage.init(unpacked:)`:
/// valid only inside the `withUnpacked` call that made it (its memory is freed,
/// or returned to an `UnpackArena`, when that call returns).
public struct UnpackedMessage {
    /// Mutable because protobuf-c frees it through this pointer.
    let base: UnsafeMutablePointer<ProtobufCMessage>

    package init(_ base: UnsafeMutablePointer<ProtobufCMessage>) {
        self.base = base
    }

    /// The protobuf-c message.
    package var pointer: UnsafePointer<ProtobufCMessage> { UnsafePointer(base) }

    /// The message as its generated C struct type.
    package func cast<T>(to type: T.Type) -> UnsafePointer<T> {
        UnsafeRawPointer(base).assumingMemoryBound(to: T.self)
    }

    /// The message's type.
    public var descriptor: MessageDescriptor { MessageDescriptor(base.pointee.descriptor) }
}
