import CLarderProto
import CProtobufC
import LarderWire

/// `larder.v1.CreateCategoryGroupRequest`.
public struct CreateCategoryGroupRequest: Hashable, Sendable {
    public var categoryGroup: CategoryGroup
    public init(categoryGroup: CategoryGroup) { self.categoryGroup = categoryGroup }
}

extension CreateCategoryGroupRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__create_category_group_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__CreateCategoryGroupRequest.self).pointee
        categoryGroup = try c.category_group.map { p throws(RPCError) in try CategoryGroup(c: p) } ?? CategoryGroup()
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__CreateCategoryGroupRequest.self) {
            larder__v1__create_category_group_request__init($0)
        }
        c.pointee.category_group = categoryGroup.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.GetCategoryGroupRequest`.
public struct GetCategoryGroupRequest: Hashable, Sendable {
    public var id: String
    /// Also return the group's item categories (sorted by name).
    public var includeItemCategories: Bool
    public init(id: String, includeItemCategories: Bool = false) {
        self.id = id
        self.includeItemCategories = includeItemCategories
    }
}

extension GetCategoryGroupRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__get_category_group_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__GetCategoryGroupRequest.self).pointee
        id = try CFields.string(c.id, field: "id")
        includeItemCategories = c.include_item_categories != 0
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__GetCategoryGroupRequest.self) {
            larder__v1__get_category_group_request__init($0)
        }
        c.pointee.id = arena.string(id)
        c.pointee.include_item_categories = includeItemCategories ? 1 : 0
        return c.asMessage
    }
}

/// `larder.v1.ListCategoryGroupsRequest`.
public struct ListCategoryGroupsRequest: Hashable, Sendable {
    public init() {}
}

extension ListCategoryGroupsRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_category_groups_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        arena.message(Larder__V1__ListCategoryGroupsRequest.self) {
            larder__v1__list_category_groups_request__init($0)
        }.asMessage
    }
}

/// `larder.v1.ListCategoryGroupsResponse`.
public struct ListCategoryGroupsResponse: Hashable, Sendable {
    /// Sorted by name.
    public var categoryGroups: [CategoryGroup]
    public init(categoryGroups: [CategoryGroup]) { self.categoryGroups = categoryGroups }
}

extension ListCategoryGroupsResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_category_groups_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__ListCategoryGroupsResponse.self).pointee
        categoryGroups = try CFields.messages(c.category_groups, count: c.n_category_groups) {
            p throws(RPCError) in try CategoryGroup(c: p)
        }
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__ListCategoryGroupsResponse.self) {
            larder__v1__list_category_groups_response__init($0)
        }
        c.pointee.n_category_groups = categoryGroups.count
        c.pointee.category_groups = arena.pointers(categoryGroups) { $0.buildC(in: arena) }
        return c.asMessage
    }
}

/// `larder.v1.UpdateCategoryGroupRequest`.
public struct UpdateCategoryGroupRequest: Hashable, Sendable {
    /// The id selects the group; the other fields are the new values.
    public var categoryGroup: CategoryGroup
    /// Empty = all mutable fields (`name`, `color_hex`).
    public var updateMask: FieldMask
    public init(categoryGroup: CategoryGroup, updateMask: FieldMask = []) {
        self.categoryGroup = categoryGroup
        self.updateMask = updateMask
    }
}

extension UpdateCategoryGroupRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__update_category_group_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__UpdateCategoryGroupRequest.self).pointee
        categoryGroup = try c.category_group.map { p throws(RPCError) in try CategoryGroup(c: p) } ?? CategoryGroup()
        updateMask = try FieldMask(c: c.update_mask)
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__UpdateCategoryGroupRequest.self) {
            larder__v1__update_category_group_request__init($0)
        }
        c.pointee.category_group = categoryGroup.buildC(in: arena)
        c.pointee.update_mask = updateMask.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.DeleteCategoryGroupRequest`.
public struct DeleteCategoryGroupRequest: Hashable, Sendable {
    public var id: String
    /// Also delete the group's item categories; without it a non-empty group is FAILED_PRECONDITION.
    public var cascade: Bool
    public init(id: String, cascade: Bool = false) {
        self.id = id
        self.cascade = cascade
    }
}

extension DeleteCategoryGroupRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__delete_category_group_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__DeleteCategoryGroupRequest.self).pointee
        id = try CFields.string(c.id, field: "id")
        cascade = c.cascade != 0
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__DeleteCategoryGroupRequest.self) {
            larder__v1__delete_category_group_request__init($0)
        }
        c.pointee.id = arena.string(id)
        c.pointee.cascade = cascade ? 1 : 0
        return c.asMessage
    }
}
