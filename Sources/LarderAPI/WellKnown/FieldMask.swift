import CLarderProto
import CProtobufC
public import LarderWire

/// The fields an update changes (`google.protobuf.FieldMask`); empty means all mutable fields.
public struct FieldMask: Hashable, Sendable, ExpressibleByArrayLiteral {
    public var paths: [String]

    public init(paths: [String] = []) { self.paths = paths }
    public init(arrayLiteral elements: String...) { self.paths = elements }

    /// True when the mask is empty (replace every mutable field) or names `field`.
    public func covers(_ field: String) -> Bool { paths.isEmpty || paths.contains(field) }

    init(c: UnsafeMutablePointer<Google__Protobuf__FieldMask>?) throws(RPCError) {
        guard let c else { self.init(); return }
        self.init(paths: try CFields.strings(c.pointee.paths, count: c.pointee.n_paths, field: "update_mask"))
    }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Google__Protobuf__FieldMask>? {
        if paths.isEmpty { return nil }
        let c = arena.message(Google__Protobuf__FieldMask.self) { google__protobuf__field_mask__init($0) }
        c.pointee.n_paths = paths.count
        c.pointee.paths = arena.stringArray(paths)
        return c
    }
}

extension FieldMask: ProtoMessage {
    public static var descriptor: MessageDescriptor {
        MessageDescriptor(google__protobuf__field_mask__descriptor_ptr())
    }

    public init(unpacked message: UnpackedMessage) throws(RPCError) {
        try self.init(c: UnsafeMutablePointer(mutating: message.cast(to: Google__Protobuf__FieldMask.self)))
    }

    public func build(in arena: CArena) -> BuiltMessage {
        BuiltMessage(buildC(in: arena) ?? arena.message(Google__Protobuf__FieldMask.self) { google__protobuf__field_mask__init($0) })
    }
}

