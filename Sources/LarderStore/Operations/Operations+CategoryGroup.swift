public import LarderAPI
public import LarderWire

extension Operations {
    /// Creates a category group. INVALID_ARGUMENT for a bad field, ALREADY_EXISTS for a taken name or id.
    public static func createCategoryGroup(_ request: CreateCategoryGroupRequest,
                                           _ db: any StoreWriter) throws(RPCError) -> CategoryGroup {
        let input = request.categoryGroup
        let id = try Validation.newID(input.id, field: "category_group.id")
        let name = try Validation.name(input.name, field: "category_group.name")
        let colorHex = try Validation.colorHex(input.colorHex, field: "category_group.color_hex")
        let now = StoreClock.now()
        let group = CategoryGroup(id: id, name: name, colorHex: colorHex, createTime: now, updateTime: now)
        try db.insertCategoryGroup(group)
        return group
    }

    /// The group with the id, with its item categories (sorted by name) when asked.
    /// INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func getCategoryGroup(_ request: GetCategoryGroupRequest,
                                        _ db: any StoreReader) throws(RPCError) -> CategoryGroup {
        let id = try Validation.id(request.id, field: "id")
        guard var group = try db.categoryGroup(id: id) else { throw StoreError.notFound("category group", id: id) }
        if request.includeItemCategories { group.itemCategories = try db.itemCategories(groupID: id, .all) }
        return group
    }

    /// Category groups sorted by name (without their item categories): a page of `page_size`
    /// (at most `maxPageSize`), or with `page_size` 0 all of them. INVALID_ARGUMENT for a
    /// negative page size or a bad page token.
    public static func listCategoryGroups(_ request: ListCategoryGroupsRequest,
                                          _ db: any StoreReader) throws(RPCError) -> ListCategoryGroupsResponse {
        let paging = try NameListPage(pageSize: request.pageSize, pageToken: request.pageToken, list: .categoryGroups)
        let page = paging.page(try db.categoryGroups(paging.query))
        return ListCategoryGroupsResponse(categoryGroups: page.rows, nextPageToken: page.nextPageToken)
    }

    /// Changes the fields the mask names (all mutable ones when empty).
    /// INVALID_ARGUMENT for a bad field or path, NOT_FOUND, ALREADY_EXISTS for a taken name.
    public static func updateCategoryGroup(_ request: UpdateCategoryGroupRequest,
                                           _ db: any StoreWriter) throws(RPCError) -> CategoryGroup {
        let input = request.categoryGroup
        let mask = request.updateMask
        let id = try Validation.id(input.id, field: "category_group.id")
        try UpdateMask.check(mask, allowed: categoryGroupPaths)
        let name = mask.covers("name") ? try Validation.name(input.name, field: "category_group.name") : nil
        let colorHex = mask.covers("color_hex")
            ? try Validation.colorHex(input.colorHex, field: "category_group.color_hex") : nil

        guard var group = try db.categoryGroup(id: id) else { throw StoreError.notFound("category group", id: id) }
        if let name { group.name = name }
        if let colorHex { group.colorHex = colorHex }
        group.updateTime = StoreClock.now()
        guard try db.updateCategoryGroup(group) else { throw StoreError.notFound("category group", id: id) }
        return group
    }

    /// Deletes a group; with `cascade`, its item categories too (same transaction).
    /// INVALID_ARGUMENT for a bad id, NOT_FOUND, FAILED_PRECONDITION while it has categories and no cascade.
    public static func deleteCategoryGroup(_ request: DeleteCategoryGroupRequest,
                                           _ db: any StoreWriter) throws(RPCError) -> Empty {
        let id = try Validation.id(request.id, field: "id")
        // Read first: a backend shared by replicas locks the row here, so a category another
        // replica is adding to the group is either counted (and deleted with cascade) or refused.
        guard try db.categoryGroup(id: id) != nil else { throw StoreError.notFound("category group", id: id) }
        let count = try db.itemCategoryCount(groupID: id)
        if count > 0 {
            guard request.cascade else { throw StoreError.categoryGroupInUse(id: id, count: count) }
            _ = try db.deleteItemCategories(groupID: id)
        }
        guard try db.deleteCategoryGroup(id: id) else { throw StoreError.notFound("category group", id: id) }
        return Empty()
    }
}
