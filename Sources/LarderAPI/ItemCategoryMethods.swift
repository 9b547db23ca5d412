import CLarderProto
import LarderWire

/// The methods of `larder.v1.ItemCategoryService`, typed, from its generated descriptor.
public enum ItemCategoryMethods {
    public static let service = ServiceDescriptor(larder__v1__item_category_service__descriptor_ptr())
    public static let createItemCategory =
        RPCMethod<CreateItemCategoryRequest, ItemCategory>(service, "CreateItemCategory")
    public static let getItemCategory = RPCMethod<GetItemCategoryRequest, ItemCategory>(service, "GetItemCategory")
    public static let listItemCategories =
        RPCMethod<ListItemCategoriesRequest, ListItemCategoriesResponse>(service, "ListItemCategories")
    public static let updateItemCategory =
        RPCMethod<UpdateItemCategoryRequest, ItemCategory>(service, "UpdateItemCategory")
    public static let deleteItemCategory = RPCMethod<DeleteItemCategoryRequest, Empty>(service, "DeleteItemCategory")
}
