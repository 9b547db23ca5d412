import CLarderProto
import CProtobufC
import LarderWire

/// `larder.v1.CreateItemCategoryRequest`.
public struct CreateItemCategoryRequest: Hashable, Sendable {
    public var itemCategory: ItemCategory
    public init(itemCategory: ItemCategory) { self.itemCategory = itemCategory }
}

extension CreateItemCategoryRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__create_item_category_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__CreateItemCategoryRequest.self).pointee
        itemCategory = try c.item_category.map { p throws(RPCError) in try ItemCategory(c: p) } ?? ItemCategory()
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__CreateItemCategoryRequest.self) {
            larder__v1__create_item_category_request__init($0)
        }
        c.pointee.item_category = itemCategory.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.GetItemCategoryRequest`.
public struct GetItemCategoryRequest: Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

extension GetItemCategoryRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__get_item_category_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        id = try CFields.string(message.cast(to: Larder__V1__GetItemCategoryRequest.self).pointee.id, field: "id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__GetItemCategoryRequest.self) { larder__v1__get_item_category_request__init($0) }
        c.pointee.id = arena.string(id)
        return c.asMessage
    }
}

/// `larder.v1.ListItemCategoriesRequest`.
public struct ListItemCategoriesRequest: Hashable, Sendable {
    /// Only this group's categories; empty = all groups.
    public var categoryGroupID: String
    public init(categoryGroupID: String = "") { self.categoryGroupID = categoryGroupID }
}

extension ListItemCategoriesRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_item_categories_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__ListItemCategoriesRequest.self).pointee
        categoryGroupID = try CFields.string(c.category_group_id, field: "category_group_id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__ListItemCategoriesRequest.self) {
            larder__v1__list_item_categories_request__init($0)
        }
        c.pointee.category_group_id = arena.string(categoryGroupID)
        return c.asMessage
    }
}

/// `larder.v1.ListItemCategoriesResponse`.
public struct ListItemCategoriesResponse: Hashable, Sendable {
    /// Sorted by name, then id.
    public var itemCategories: [ItemCategory]
    public init(itemCategories: [ItemCategory]) { self.itemCategories = itemCategories }
}

extension ListItemCategoriesResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_item_categories_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__ListItemCategoriesResponse.self).pointee
        itemCategories = try CFields.messages(c.item_categories, count: c.n_item_categories) {
            p throws(RPCError) in try ItemCategory(c: p)
        }
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__ListItemCategoriesResponse.self) {
            larder__v1__list_item_categories_response__init($0)
        }
        c.pointee.n_item_categories = itemCategories.count
        c.pointee.item_categories = arena.pointers(itemCategories) { $0.buildC(in: arena) }
        return c.asMessage
    }
}

/// `larder.v1.UpdateItemCategoryRequest`.
public struct UpdateItemCategoryRequest: Hashable, Sendable {
    /// The id selects the category; the other fields are the new values.
    public var itemCategory: ItemCategory
    /// Empty = all mutable fields (`name`, `icon_name`, `category_group_id`).
    public var updateMask: FieldMask
    public init(itemCategory: ItemCategory, updateMask: FieldMask = []) {
        self.itemCategory = itemCategory
        self.updateMask = updateMask
    }
}

extension UpdateItemCategoryRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__update_item_category_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__UpdateItemCategoryRequest.self).pointee
        itemCategory = try c.item_category.map { p throws(RPCError) in try ItemCategory(c: p) } ?? ItemCategory()
        updateMask = try FieldMask(c: c.update_mask)
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__UpdateItemCategoryRequest.self) {
            larder__v1__update_item_category_request__init($0)
        }
        c.pointee.item_category = itemCategory.buildC(in: arena)
        c.pointee.update_mask = updateMask.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.DeleteItemCategoryRequest`.
public struct DeleteItemCategoryRequest: Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

extension DeleteItemCategoryRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__delete_item_category_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        id = try CFields.string(message.cast(to: Larder__V1__DeleteItemCategoryRequest.self).pointee.id, field: "id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__DeleteItemCategoryRequest.self) {
            larder__v1__delete_item_category_request__init($0)
        }
        c.pointee.id = arena.string(id)
        return c.asMessage
    }
}
