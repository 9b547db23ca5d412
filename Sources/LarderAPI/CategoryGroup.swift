import CLarderProto
import CProtobufC
import LarderWire

/// A big category of the household such as "Food" (`larder.v1.CategoryGroup`).
public struct CategoryGroup: Hashable, Sendable {
    /// Lowercase UUID v4; empty on create lets the server choose.
    public var id: String
    public var name: String
    /// `#RRGGBB`, upper case as stored.
    public var colorHex: String
    /// Output only.
    public var createTime: Timestamp?
    /// Output only.
    public var updateTime: Timestamp?
    /// Output only: filled by GetCategoryGroup with `includeItemCategories`, sorted by name.
    public var itemCategories: [ItemCategory]

    public init(id: String = "", name: String = "", colorHex: String = "",
                createTime: Timestamp? = nil, updateTime: Timestamp? = nil, itemCategories: [ItemCategory] = []) {
        self.id = id
        self.name = name
        self.colorHex = colorHex
        self.createTime = createTime
        self.updateTime = updateTime
        self.itemCategories = itemCategories
    }
}

extension CategoryGroup: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__category_group__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        try self.init(c: message.cast(to: Larder__V1__CategoryGroup.self))
    }

    init(c: UnsafePointer<Larder__V1__CategoryGroup>) throws(RPCError) {
        let c = c.pointee
        self.init(
            id: try CFields.string(c.id, field: "category_group.id"),
            name: try CFields.string(c.name, field: "category_group.name"),
            colorHex: try CFields.string(c.color_hex, field: "category_group.color_hex"),
            createTime: Timestamp?(c: c.create_time),
            updateTime: Timestamp?(c: c.update_time),
            itemCategories: try CFields.messages(c.item_categories, count: c.n_item_categories) {
                p throws(RPCError) in try ItemCategory(c: p)
            })
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__V1__CategoryGroup> {
        let c = arena.message(Larder__V1__CategoryGroup.self) { larder__v1__category_group__init($0) }
        c.pointee.id = arena.string(id)
        c.pointee.name = arena.string(name)
        c.pointee.color_hex = arena.string(colorHex)
        c.pointee.create_time = createTime.buildC(in: arena)
        c.pointee.update_time = updateTime.buildC(in: arena)
        c.pointee.n_item_categories = itemCategories.count
        c.pointee.item_categories = arena.pointers(itemCategories) { $0.buildC(in: arena) }
        return c
    }
}
