import LarderAPI
import LarderStore
import LarderWire
import Testing

/// Category groups and their item categories (the many-to-one relation).
///
/// Each test runs on a fresh database of every backend in `Backend.all`: the
/// static `@Test` opens the fixture and calls the instance method of the same name.
@Suite struct CategoryTests {
    let db: TestDatabase
    let food: CategoryGroup
    let tools: CategoryGroup

    init(_ backend: Backend) throws {
        db = try TestDatabase(backend)
        food = try db.write(Operations.createCategoryGroup,
                            CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "Food", colorHex: "#34c759")))
        tools = try db.write(Operations.createCategoryGroup,
                             CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "Tools", colorHex: "#000000")))
    }

    @discardableResult
    func addCategory(_ name: String, to group: CategoryGroup, icon: String = "leaf.fill") throws -> ItemCategory {
        try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
            itemCategory: ItemCategory(name: name, iconName: icon, categoryGroupID: group.id)))
    }

    @Test(arguments: Backend.all)
    static func groupCRUD(backend: Backend) throws {
        try Self(backend).groupCRUD()
    }

    func groupCRUD() throws {
        #expect(food.colorHex == "#34C759")
        #expect(try db.read(Operations.getCategoryGroup, GetCategoryGroupRequest(id: food.id)) == food)
        #expect(try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest()).categoryGroups == [food, tools])
        let renamed = try db.write(Operations.updateCategoryGroup, UpdateCategoryGroupRequest(
            categoryGroup: CategoryGroup(id: food.id, name: "食物"), updateMask: ["name"]))
        #expect(renamed.name == "食物" && renamed.colorHex == "#34C759" && renamed.createTime == food.createTime)
        #expect(rpcError {
            try db.write(Operations.updateCategoryGroup, UpdateCategoryGroupRequest(
                categoryGroup: CategoryGroup(id: food.id, name: "Tools"), updateMask: ["name"]))
        } == RPCError(.alreadyExists, "category group name \"Tools\" already exists"))
        #expect(rpcError {
            try db.write(Operations.createCategoryGroup,
                         CreateCategoryGroupRequest(categoryGroup: CategoryGroup(name: "Tools", colorHex: "#000000")))
        } == RPCError(.alreadyExists, "category group name \"Tools\" already exists"))
        #expect(rpcError {
            try db.write(Operations.updateCategoryGroup, UpdateCategoryGroupRequest(
                categoryGroup: CategoryGroup(id: food.id, name: "X"), updateMask: ["item_categories"]))
        }?.code == .invalidArgument)
    }

    @Test(arguments: Backend.all)
    static func getWithItemCategoriesSortsByName(backend: Backend) throws {
        try Self(backend).getWithItemCategoriesSortsByName()
    }

    func getWithItemCategoriesSortsByName() throws {
        let veg = try addCategory("蔬果", to: food)
        let drinks = try addCategory("Drinks", to: food, icon: "cup.and.saucer.fill")
        try addCategory("Hammer", to: tools)
        let plain = try db.read(Operations.getCategoryGroup, GetCategoryGroupRequest(id: food.id))
        #expect(plain.itemCategories.isEmpty)
        let full = try db.read(Operations.getCategoryGroup,
                               GetCategoryGroupRequest(id: food.id, includeItemCategories: true))
        #expect(full.itemCategories == [drinks, veg])
        #expect(try db.read(Operations.listItemCategories, ListItemCategoriesRequest(categoryGroupID: food.id))
            .itemCategories == [drinks, veg])
        #expect(try db.read(Operations.listItemCategories, ListItemCategoriesRequest()).itemCategories.map(\.name)
            == ["Drinks", "Hammer", "蔬果"])
        #expect(try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: veg.id)) == veg)
    }

    @Test(arguments: Backend.all)
    static func itemCategoryNamesAreUniqueWithinAGroupOnly(backend: Backend) throws {
        try Self(backend).itemCategoryNamesAreUniqueWithinAGroupOnly()
    }

    func itemCategoryNamesAreUniqueWithinAGroupOnly() throws {
        try addCategory("Misc", to: food)
        try addCategory("Misc", to: tools)
        #expect(rpcError { try addCategory("Misc", to: food) }
            == RPCError(.alreadyExists, "item category name \"Misc\" already exists in category group \"\(food.id)\""))
    }

    @Test(arguments: Backend.all)
    static func itemCategoryNeedsAnExistingGroup(backend: Backend) throws {
        try Self(backend).itemCategoryNeedsAnExistingGroup()
    }

    func itemCategoryNeedsAnExistingGroup() throws {
        let missing = StoreID.generate()
        let error = rpcError {
            try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
                itemCategory: ItemCategory(name: "Orphan", iconName: "leaf", categoryGroupID: missing)))
        }
        #expect(error == RPCError(.failedPrecondition, "category group \"\(missing)\" does not exist"))
        #expect(rpcError {
            try db.write(Operations.createItemCategory, CreateItemCategoryRequest(
                itemCategory: ItemCategory(name: "Orphan", iconName: "leaf")))
        } == RPCError(.invalidArgument, "item_category.category_group_id is required"))
    }

    @Test(arguments: Backend.all)
    static func itemCategoryMovesBetweenGroups(backend: Backend) throws {
        try Self(backend).itemCategoryMovesBetweenGroups()
    }

    func itemCategoryMovesBetweenGroups() throws {
        let saw = try addCategory("Saw", to: food)
        let moved = try db.write(Operations.updateItemCategory, UpdateItemCategoryRequest(
            itemCategory: ItemCategory(id: saw.id, categoryGroupID: tools.id), updateMask: ["category_group_id"]))
        #expect(moved.categoryGroupID == tools.id && moved.name == "Saw" && moved.iconName == "leaf.fill")
        #expect(try db.read(Operations.listItemCategories, ListItemCategoriesRequest(categoryGroupID: tools.id))
            .itemCategories == [moved])

        let missing = StoreID.generate()
        #expect(rpcError {
            try db.write(Operations.updateItemCategory, UpdateItemCategoryRequest(
                itemCategory: ItemCategory(id: saw.id, categoryGroupID: missing), updateMask: ["category_group_id"]))
        } == RPCError(.failedPrecondition, "category group \"\(missing)\" does not exist"))

        let all = try db.write(Operations.updateItemCategory, UpdateItemCategoryRequest(
            itemCategory: ItemCategory(id: saw.id, name: "Big saw", iconName: "hammer.fill", categoryGroupID: food.id)))
        #expect(all.name == "Big saw" && all.iconName == "hammer.fill" && all.categoryGroupID == food.id)
        #expect(all.createTime == saw.createTime)
        #expect(try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: saw.id)) == all)
    }

    @Test(arguments: Backend.all)
    static func deletingAGroupWithCategoriesNeedsCascade(backend: Backend) throws {
        try Self(backend).deletingAGroupWithCategoriesNeedsCascade()
    }

    func deletingAGroupWithCategoriesNeedsCascade() throws {
        let veg = try addCategory("Veg", to: food)
        let fruit = try addCategory("Fruit", to: food)
        let hammer = try addCategory("Hammer", to: tools)

        #expect(rpcError { try db.write(Operations.deleteCategoryGroup, DeleteCategoryGroupRequest(id: food.id)) }
            == RPCError(.failedPrecondition, "category group \"\(food.id)\" still has 2 item categories; "
                        + "delete them first or set cascade"))
        #expect(try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: veg.id)) == veg)

        _ = try db.write(Operations.deleteCategoryGroup, DeleteCategoryGroupRequest(id: food.id, cascade: true))
        #expect(rpcError { try db.read(Operations.getCategoryGroup, GetCategoryGroupRequest(id: food.id)) }?.code
            == .notFound)
        for id in [veg.id, fruit.id] {
            #expect(rpcError { try db.read(Operations.getItemCategory, GetItemCategoryRequest(id: id)) }?.code
                == .notFound)
        }
        #expect(try db.read(Operations.listItemCategories, ListItemCategoriesRequest()).itemCategories == [hammer])

        _ = try db.write(Operations.deleteItemCategory, DeleteItemCategoryRequest(id: hammer.id))
        _ = try db.write(Operations.deleteCategoryGroup, DeleteCategoryGroupRequest(id: tools.id))
        #expect(try db.read(Operations.listCategoryGroups, ListCategoryGroupsRequest()).categoryGroups.isEmpty)
    }
}
