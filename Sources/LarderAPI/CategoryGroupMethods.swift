import CLarderProto
import LarderWire

/// The methods of `larder.v1.CategoryGroupService`, typed, from its generated descriptor.
public enum CategoryGroupMethods {
    public static let service = ServiceDescriptor(larder__v1__category_group_service__descriptor_ptr())
    public static let createCategoryGroup =
        RPCMethod<CreateCategoryGroupRequest, CategoryGroup>(service, "CreateCategoryGroup")
    public static let getCategoryGroup = RPCMethod<GetCategoryGroupRequest, CategoryGroup>(service, "GetCategoryGroup")
    public static let listCategoryGroups =
        RPCMethod<ListCategoryGroupsRequest, ListCategoryGroupsResponse>(service, "ListCategoryGroups")
    public static let updateCategoryGroup =
        RPCMethod<UpdateCategoryGroupRequest, CategoryGroup>(service, "UpdateCategoryGroup")
    public static let deleteCategoryGroup = RPCMethod<DeleteCategoryGroupRequest, Empty>(service, "DeleteCategoryGroup")
}
