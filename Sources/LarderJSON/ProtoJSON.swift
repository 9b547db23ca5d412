package import CProtobufC
public import LarderWire

/// The proto3 JSON mapping for every message compiled from proto/, driven by
/// the protobuf-c descriptors alone (no code per message).
///
/// lowerCamelCase member names (the .proto names are accepted too), enums by
/// name (numbers accepted), 64-bit integers as strings (numbers accepted),
/// bytes as base64, `google.protobuf.Timestamp` as RFC 3339,
/// `google.protobuf.FieldMask` as comma-separated lowerCamelCase paths, maps
/// as objects, repeated fields as arrays; default values are left out of the
/// output. Unknown members and wrong types are INVALID_ARGUMENT errors naming
/// the field path, e.g. `location.colorHex: expected a string, got number`.
public enum ProtoJSON {
    /// How messages are printed.
    public struct Options: Sendable {
        /// Print scalar fields at their default, and empty repeated fields and maps
        /// (unset message fields are still left out).
        public var emitDefaults: Bool

        public init(emitDefaults: Bool = false) {
            self.emitDefaults = emitDefaults
        }
    }

    /// The protobuf encoding of the message of `type` that `json` describes.
    /// - Throws: INVALID_ARGUMENT naming the field path of the first problem.
    public static func binary(from json: JSON, type: MessageDescriptor) throws(RPCError) -> [UInt8] {
        let result = CArena.with { arena in
            Result { () throws(RPCError) -> [UInt8] in
                let message = try JSONToMessage(arena: arena).message(json, type, path: FieldPath(rootType: type.name))
                return ProtoCodec.pack(UnsafePointer(message.assumingMemoryBound(to: ProtobufCMessage.self)))
            }
        }
        return try result.get()
    }

    /// The protobuf encoding of the message of `type` that the JSON text describes.
    /// - Throws: INVALID_ARGUMENT for invalid JSON (with line and column) or a field that does not fit.
    public static func binary(fromJSON text: String, type: MessageDescriptor) throws(RPCError) -> [UInt8] {
        try binary(from: JSONParser.parse(text), type: type)
    }

    /// The JSON form of the protobuf-encoded message `bytes` of `type`.
    /// - Throws: INVALID_ARGUMENT when the bytes are not a valid message, or
    ///   a string in it is not UTF-8.
    public static func json(fromBinary bytes: [UInt8], type: MessageDescriptor, options: Options = Options())
        throws(RPCError) -> JSON
    {
        try ProtoCodec.withUnpacked(type, from: bytes) { message throws(RPCError) in
            try json(of: message.pointer, options: options)
        }
    }

    /// The JSON form of an unpacked (or built) protobuf-c message.
    package static func json(of message: UnsafePointer<ProtobufCMessage>, options: Options = Options())
        throws(RPCError) -> JSON
    {
        let type = MessageDescriptor(message.pointee.descriptor)
        return try MessageToJSON(options: options)
            .message(UnsafeRawPointer(message), type, path: FieldPath(rootType: type.name))
    }

    /// `path: expected a string, got number`.
    static func typeError(_ path: FieldPath, expected: String, got json: JSON) -> RPCError {
        RPCError.invalidArgument("\(path.description): expected \(expected), got \(json.kind)")
    }

    static let timestampName = "google.protobuf.Timestamp"
    static let fieldMaskName = "google.protobuf.FieldMask"
}
