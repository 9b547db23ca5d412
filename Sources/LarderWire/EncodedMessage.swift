/// A message with its protobuf encoding, made once and reused: a store that
/// keeps records encoded writes `bytes`, and the reply is the same bytes.
public struct EncodedMessage<M: ProtoMessage>: Sendable {
    /// The message.
    public let message: M
    /// The encoding of `message`.
    public let bytes: [UInt8]

    /// Encodes `message`.
    public init(_ message: M) {
        self.message = message
        bytes = ProtoCodec.encode(message)
    }
}
