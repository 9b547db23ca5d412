import CLarderProto
import CProtobufC
import LarderWire

/// A room or area of the home (`larder.v1.Location`).
public struct Location: Hashable, Sendable {
    /// Lowercase UUID v4; empty on create lets the server choose.
    public var id: String
    public var name: String
    /// `#RRGGBB`, upper case as stored.
    public var colorHex: String
    /// Output only.
    public var createTime: Timestamp?
    /// Output only.
    public var updateTime: Timestamp?

    public init(id: String = "", name: String = "", colorHex: String = "",
                createTime: Timestamp? = nil, updateTime: Timestamp? = nil) {
        self.id = id
        self.name = name
        self.colorHex = colorHex
        self.createTime = createTime
        self.updateTime = updateTime
    }
}

extension Location: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> { larder__v1__location__descriptor_ptr() }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        try self.init(c: message.cast(to: Larder__V1__Location.self))
    }

    init(c: UnsafePointer<Larder__V1__Location>) throws(RPCError) {
        let c = c.pointee
        self.init(
            id: try CFields.string(c.id, field: "location.id"),
            name: try CFields.string(c.name, field: "location.name"),
            colorHex: try CFields.string(c.color_hex, field: "location.color_hex"),
            createTime: Timestamp?(c: c.create_time),
            updateTime: Timestamp?(c: c.update_time))
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__V1__Location> {
        let c = arena.message(Larder__V1__Location.self) { larder__v1__location__init($0) }
        c.pointee.id = arena.string(id)
        c.pointee.name = arena.string(name)
        c.pointee.color_hex = arena.string(colorHex)
        c.pointee.create_time = createTime.buildC(in: arena)
        c.pointee.update_time = updateTime.buildC(in: arena)
        return c
    }
}
