package import CLarderProto
import CProtobufC

/// One call from client to server (`larder.rpc.v1.RequestEnvelope`).
public struct RequestEnvelope: Hashable, Sendable {
    /// Chosen by the client: non-zero, unique among its calls in flight.
    public var callID: UInt64
    /// Full method name, e.g. `/larder.v1.LocationService/GetLocation`.
    public var method: String
    /// The encoded request message.
    public var payload: [UInt8]
    /// Relative deadline in milliseconds; 0 means none.
    public var timeoutMilliseconds: UInt32
    /// Call metadata such as `authorization`.
    public var metadata: [String: String]

    public init(callID: UInt64, method: String, payload: [UInt8], timeoutMilliseconds: UInt32 = 0,
                metadata: [String: String] = [:]) {
        self.callID = callID
        self.method = method
        self.payload = payload
        self.timeoutMilliseconds = timeoutMilliseconds
        self.metadata = metadata
    }
}

extension RequestEnvelope: ProtoMessage {
    public static var descriptor: MessageDescriptor {
        MessageDescriptor(larder__rpc__v1__request_envelope__descriptor_ptr())
    }

    public init(unpacked message: UnpackedMessage) throws(RPCError) {
        let c = message.cast(to: Larder__Rpc__V1__RequestEnvelope.self).pointee
        callID = c.call_id
        method = try CFields.string(c.method, field: "method")
        payload = CFields.bytes(c.payload)
        timeoutMilliseconds = c.timeout_ms
        metadata = try Self.metadata(of: c)
    }

    /// The metadata of an unpacked envelope, keys lower-cased.
    /// - Throws: INVALID_ARGUMENT when a key or value is not valid UTF-8.
    package static func metadata(of c: Larder__Rpc__V1__RequestEnvelope) throws(RPCError) -> [String: String] {
        var metadata: [String: String] = [:]
        guard let entries = c.metadata, c.n_metadata > 0 else { return metadata }
        for index in 0..<c.n_metadata {
            guard let entry = entries[index]?.pointee else { continue }
            let key = try CFields.string(entry.key, field: "metadata key")
            metadata[key.lowercased()] = try CFields.string(entry.value, field: "metadata value")
        }
        return metadata
    }

    public func build(in arena: CArena) -> BuiltMessage {
        let c = arena.message(Larder__Rpc__V1__RequestEnvelope.self) { larder__rpc__v1__request_envelope__init($0) }
        c.pointee.call_id = callID
        c.pointee.method = arena.string(method)
        c.pointee.payload = arena.bytes(payload)
        c.pointee.timeout_ms = timeoutMilliseconds
        let entries = metadata.sorted { $0.key < $1.key }
        c.pointee.n_metadata = entries.count
        c.pointee.metadata = arena.pointers(entries) { entry in
            let e = arena.message(Larder__Rpc__V1__RequestEnvelope__MetadataEntry.self) {
                larder__rpc__v1__request_envelope__metadata_entry__init($0)
            }
            e.pointee.key = arena.string(entry.key)
            e.pointee.value = arena.string(entry.value)
            return e
        }
        return BuiltMessage(c)
    }
}
