package import CProtobufC

/// Packs and unpacks `ProtoMessage` values with protobuf-c.
///
/// The only place in the server and client libraries that calls
/// `protobuf_c_message_pack` and `protobuf_c_message_unpack` (`ResponseFrame`
/// packs through `pack(_:size:appendingTo:)`; only `larder bench` packs its
/// precomputed envelopes itself); every unpacked message is freed before the
/// call returns (to malloc, or to the caller's `UnpackArena`).
///
/// The generic entry points are `@inlinable`, so each caller gets them
/// specialised for its message types; they reach protobuf-c through the
/// non-generic `unpack` and `free`, whose signatures carry only the opaque
/// handles (an inlinable body cannot name a type of a `package import`).
public enum ProtoCodec {
    /// The protobuf encoding of `message`.
    public static func encode<M: ProtoMessage>(_ message: M) -> [UInt8] {
        CArena.with { arena in pack(message.build(in: arena)) }
    }

    /// Appends the protobuf encoding of `message` to `buffer`, building it in
    /// `arena`, which is reset afterwards (a caller's reusable arena).
    public static func encode<M: ProtoMessage>(_ message: M, appendingTo buffer: inout [UInt8], using arena: CArena) {
        defer { arena.reset() }
        let c = UnsafePointer(message.build(in: arena).pointer)
        pack(c, size: protobuf_c_message_get_packed_size(c), appendingTo: &buffer)
    }

    /// Appends the encoding of a C message whose packed size is `size` to `buffer`.
    package static func pack(_ message: UnsafePointer<ProtobufCMessage>, size: Int, appendingTo buffer: inout [UInt8]) {
        guard size > 0 else { return }
        let offset = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: size))
        buffer.withUnsafeMutableBufferPointer { out in
            _ = protobuf_c_message_pack(message, out.baseAddress! + offset)
        }
    }

    /// Packs a C message (built in an arena, or unpacked).
    package static func pack(_ message: UnsafePointer<ProtobufCMessage>) -> [UInt8] {
        let size = protobuf_c_message_get_packed_size(message)
        if size == 0 { return [] }
        // A small message is packed into scratch space and copied: `Array(_:)` of a buffer is
        // specialized where it is used. `init(unsafeUninitializedCapacity:)` allocates through a
        // non-inlinable generic function of the standard library that, on Linux, looks
        // `_ContiguousArrayStorage<UInt8>` up in the runtime's metadata cache on every call
        // (~450 instructions, more than the copy). For a large one the lookup is nothing next to
        // the packing, and a copy would not be: it is packed in place.
        if size <= 16 * 1024 {
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { scratch in
                let count = protobuf_c_message_pack(message, scratch.baseAddress!)
                return Array(UnsafeBufferPointer(rebasing: scratch[0..<count]))
            }
        }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = protobuf_c_message_pack(message, buffer.baseAddress!)
        }
    }

    /// The protobuf encoding of a message built in an arena.
    public static func pack(_ message: BuiltMessage) -> [UInt8] { pack(UnsafePointer(message.pointer)) }

    /// Decodes a `M` from its protobuf encoding.
    /// - Throws: INVALID_ARGUMENT when the bytes are not a valid `M`, or a
    ///   string field holds invalid UTF-8 or a NUL byte.
    @inlinable
    public static func decode<M: ProtoMessage>(_ type: M.Type, from bytes: [UInt8]) throws(RPCError) -> M {
        try withUnpacked(M.descriptor, from: bytes) { message throws(RPCError) in try M(unpacked: message) }
    }

    /// Decodes a `M` from its protobuf encoding in `bytes`.
    @inlinable
    public static func decode<M: ProtoMessage>(_ type: M.Type, from bytes: UnsafeRawBufferPointer)
        throws(RPCError) -> M
    {
        try withUnpacked(M.descriptor, from: bytes) { message throws(RPCError) in try M(unpacked: message) }
    }

    /// Unpacks `bytes` as a message of `descriptor`, runs `body` on it and frees it.
    @inlinable
    public static func withUnpacked<R>(
        _ descriptor: MessageDescriptor, from bytes: [UInt8],
        _ body: (UnpackedMessage) throws(RPCError) -> R
    ) throws(RPCError) -> R {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(RPCError) -> R in try withUnpacked(descriptor, from: raw, body) }
        }
        return try result.get()
    }

    /// Unpacks `bytes` as a message of `descriptor`, runs `body` on it and frees it.
    @inlinable
    public static func withUnpacked<R>(
        _ descriptor: MessageDescriptor, from bytes: UnsafeRawBufferPointer,
        _ body: (UnpackedMessage) throws(RPCError) -> R
    ) throws(RPCError) -> R {
        let message = try unpack(descriptor, from: bytes)
        defer { free(message) }
        return try body(message)
    }

    /// `bytes` unpacked with malloc as a message of `descriptor`; `free` releases it.
    @usableFromInline
    static func unpack(_ descriptor: MessageDescriptor, from bytes: UnsafeRawBufferPointer)
        throws(RPCError) -> UnpackedMessage
    {
        UnpackedMessage(try unpack(descriptor.pointer, from: bytes, allocator: nil))
    }

    /// Releases what `unpack(_:from:)` returned.
    @usableFromInline
    static func free(_ message: UnpackedMessage) {
        protobuf_c_message_free_unpacked(message.base, nil)
    }

    /// `bytes` unpacked as a message of `descriptor` with `allocator` (nil: malloc),
    /// to be freed with `protobuf_c_message_free_unpacked` and the same allocator.
    /// - Throws: INVALID_ARGUMENT when the bytes are not such a message or a string holds a NUL.
    static func unpack(
        _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>, from bytes: UnsafeRawBufferPointer,
        allocator: UnsafeMutablePointer<ProtobufCAllocator>?
    ) throws(RPCError) -> UnsafeMutablePointer<ProtobufCMessage> {
        let message: UnsafeMutablePointer<ProtobufCMessage>?
        if let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            message = protobuf_c_message_unpack(descriptor, allocator, bytes.count, data)
        } else {
            // protobuf-c reads nothing for a zero length, but wants a non-null pointer.
            var empty: UInt8 = 0
            message = protobuf_c_message_unpack(descriptor, allocator, 0, &empty)
        }
        guard let message else {
            throw RPCError.invalidArgument("payload is not a valid \(String(cString: descriptor.pointee.name)) message")
        }
        // protobuf-c would hand Swift the string only up to its first NUL byte.
        if let field = StringFieldScan.fieldWithNUL(in: bytes, of: descriptor) {
            protobuf_c_message_free_unpacked(message, allocator)
            throw RPCError.invalidArgument("\(field) must not contain NUL bytes")
        }
        return message
    }
}
