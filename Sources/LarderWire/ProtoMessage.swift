/// A Swift value that converts to and from one protobuf-c message type.
///
/// Conformances read the C struct in `init(unpacked:)` and build it in
/// `build(in:)`; `ProtoCodec` does the packing, unpacking and freeing. The C
/// side stays behind opaque handles (`MessageDescriptor`, `UnpackedMessage`,
/// `BuiltMessage`), whose pointers only this package sees.
public protocol ProtoMessage: Sendable {
    /// The protobuf-c descriptor of the message type.
    static var descriptor: MessageDescriptor { get }

    /// Reads the value out of an unpacked message of type `descriptor`.
    /// Throws INVALID_ARGUMENT for values Swift cannot hold (invalid UTF-8).
    init(unpacked message: UnpackedMessage) throws(RPCError)

    /// Builds the C form of the value; all memory belongs to `arena`.
    func build(in arena: CArena) -> BuiltMessage
}

extension ProtoMessage {
    /// The full protobuf name, e.g. `larder.v1.Location`.
    public static var protoName: String { descriptor.name }
}

/// A message that encodes to exactly the bytes of another, `Equivalent`: for
/// instance a `repeated bytes` field filled with encodings of the messages
/// that `Equivalent` has in a `repeated` message field at the same number. A
/// handler may answer with it where a reply of type `Equivalent` is declared.
public protocol WireEquivalent: ProtoMessage {
    associatedtype Equivalent: ProtoMessage
}
