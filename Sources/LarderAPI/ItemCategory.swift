import CLarderProto
import CProtobufC
import LarderWire

/// A category of items inside one `CategoryGroup` (`larder.v1.ItemCategory`).
public struct ItemCategory: Hashable, Sendable {
    /// Lowercase UUID v4; empty on create lets the server choose.
    public var id: String
    public var name: String
    /// An SF Symbols-style icon name such as `leaf.fill`.
    public var iconName: String
    /// The id of the owning group.
    public var categoryGroupID: String
    /// Output only.
    public var createTime: Timestamp?
    /// Output only.
    public var updateTime: Timestamp?

    public init(id: String = "", name: String = "", iconName: String = "", categoryGroupID: String = "",
                createTime: Timestamp? = nil, updateTime: Timestamp? = nil) {
        self.id = id
        self.name = name
        self.iconName = iconName
        self.categoryGroupID = categoryGroupID
        self.createTime = createTime
        self.updateTime = updateTime
    }
}

extension ItemCategory: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> { larder__v1__item_category__descriptor_ptr() }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        try self.init(c: message.cast(to: Larder__V1__ItemCategory.self))
    }

    init(c: UnsafePointer<Larder__V1__ItemCategory>) throws(RPCError) {
        let c = c.pointee
        self.init(
            id: try CFields.string(c.id, field: "item_category.id"),
            name: try CFields.string(c.name, field: "item_category.name"),
            iconName: try CFields.string(c.icon_name, field: "item_category.icon_name"),
            categoryGroupID: try CFields.string(c.category_group_id, field: "item_category.category_group_id"),
            createTime: Timestamp?(c: c.create_time),
            updateTime: Timestamp?(c: c.update_time))
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__V1__ItemCategory> {
        let c = arena.message(Larder__V1__ItemCategory.self) { larder__v1__item_category__init($0) }
        c.pointee.id = arena.string(id)
        c.pointee.name = arena.string(name)
        c.pointee.icon_name = arena.string(iconName)
        c.pointee.category_group_id = arena.string(categoryGroupID)
        c.pointee.create_time = createTime.buildC(in: arena)
        c.pointee.update_time = updateTime.buildC(in: arena)
        return c
    }
}
