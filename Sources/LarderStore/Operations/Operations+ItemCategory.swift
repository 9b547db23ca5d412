public import LarderAPI
public import LarderWire

extension Operations {
    /// Creates an item category in an existing group. INVALID_ARGUMENT for a bad field,
    /// FAILED_PRECONDITION when the group does not exist, ALREADY_EXISTS for a name taken in the group.
    public static func createItemCategory(_ request: CreateItemCategoryRequest,
                                          _ db: any StoreWriter) throws(RPCError) -> ItemCategory {
        let input = request.itemCategory
        let id = try Validation.newID(input.id, field: "item_category.id")
        let name = try Validation.name(input.name, field: "item_category.name")
        let iconName = try Validation.iconName(input.iconName, field: "item_category.icon_name")
        let groupID = try Validation.id(input.categoryGroupID, field: "item_category.category_group_id")
        let now = StoreClock.now()
        let category = ItemCategory(id: id, name: name, iconName: iconName, categoryGroupID: groupID,
                                    createTime: now, updateTime: now)
        try db.insertItemCategory(category)
        return category
    }

    /// The item category with the id. INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func getItemCategory(_ request: GetItemCategoryRequest,
                                       _ db: any StoreReader) throws(RPCError) -> ItemCategory {
        let id = try Validation.id(request.id, field: "id")
        guard let category = try db.itemCategory(id: id) else { throw StoreError.notFound("item category", id: id) }
        return category
    }

    /// Item categories sorted by name (then id): one group's when `category_group_id`
    /// is set (an empty list for a group without any or one that does not exist), else all;
    /// a page of `page_size` (at most `maxPageSize`), or with `page_size` 0 all of them.
    /// INVALID_ARGUMENT for a bad group id, a negative page size or a bad page token.
    public static func listItemCategories(_ request: ListItemCategoriesRequest,
                                          _ db: any StoreReader) throws(RPCError) -> ListItemCategoriesResponse {
        let groupID = request.categoryGroupID.isEmpty
            ? nil : try Validation.id(request.categoryGroupID, field: "category_group_id")
        let paging = try NameListPage(pageSize: request.pageSize, pageToken: request.pageToken,
                                      list: .itemCategories, filter: groupID ?? "", filterName: "category_group_id")
        let page = paging.page(try db.itemCategories(groupID: groupID, paging.query))
        return ListItemCategoriesResponse(itemCategories: page.rows, nextPageToken: page.nextPageToken)
    }

    /// Changes the fields the mask names (all mutable ones when empty); moving to
    /// another group needs that group to exist (FAILED_PRECONDITION).
    public static func updateItemCategory(_ request: UpdateItemCategoryRequest,
                                          _ db: any StoreWriter) throws(RPCError) -> ItemCategory {
        let input = request.itemCategory
        let mask = request.updateMask
        let id = try Validation.id(input.id, field: "item_category.id")
        try UpdateMask.check(mask, allowed: itemCategoryPaths)
        let name = mask.covers("name") ? try Validation.name(input.name, field: "item_category.name") : nil
        let iconName = mask.covers("icon_name")
            ? try Validation.iconName(input.iconName, field: "item_category.icon_name") : nil
        let groupID = mask.covers("category_group_id")
            ? try Validation.id(input.categoryGroupID, field: "item_category.category_group_id") : nil

        guard var category = try db.itemCategory(id: id) else { throw StoreError.notFound("item category", id: id) }
        if let name { category.name = name }
        if let iconName { category.iconName = iconName }
        if let groupID { category.categoryGroupID = groupID }
        category.updateTime = StoreClock.now()
        guard try db.updateItemCategory(category) else { throw StoreError.notFound("item category", id: id) }
        return category
    }

    /// Deletes an item category. INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func deleteItemCategory(_ request: DeleteItemCategoryRequest,
                                          _ db: any StoreWriter) throws(RPCError) -> Empty {
        let id = try Validation.id(request.id, field: "id")
        guard try db.deleteItemCategory(id: id) else { throw StoreError.notFound("item category", id: id) }
        return Empty()
    }
}
