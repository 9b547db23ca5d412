import LarderAPI
import LarderClient
import LarderTestSupport
import LarderWire
import Testing

@Suite("Category groups and item categories over TCP", .offThePool)
struct CategoryEndToEndTests {
    static let seededGroups: [String: String] = [
        "食品": "#34C759", "電器": "#007AFF", "家具": "#763300", "消耗": "#253705", "衛生": "#900C3F",
        "護理": "#E6B800", "運動": "#2D3B5E", "文具": "#F04AA7", "寵物": "#AF52DE",
    ]
    static let seededCategories: [String: [String: String]] = [
        "食品": ["食品": "carrot.fill", "蔬果": "leaf.fill", "飲品": "cup.and.saucer.fill", "酒": "wineglass.fill"],
        "電器": ["電器": "lightbulb.fill"], "家具": ["家具": "bed.double.fill"],
        "消耗": ["消耗品": "minus.plus.batteryblock.stack.fill", "清潔用品": "hands.and.sparkles"],
        "衛生": ["衛生用品": "bandage.fill"], "護理": ["面膜": "face.smiling"], "運動": ["腳踏車": "bicycle"],
        "文具": ["文具": "pencil"], "寵物": [:],
    ]

    @Test(arguments: Backend.all)
    func defaultGroupsAndCategoriesAreSeeded(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let groups = try await client.call(CategoryGroupMethods.listCategoryGroups, ListCategoryGroupsRequest())
            #expect(Dictionary(uniqueKeysWithValues: groups.categoryGroups.map { ($0.name, $0.colorHex) }) == Self.seededGroups)
            for group in groups.categoryGroups {
                let full = try await client.call(CategoryGroupMethods.getCategoryGroup,
                                                 GetCategoryGroupRequest(id: group.id, includeItemCategories: true))
                let categories = Dictionary(uniqueKeysWithValues: full.itemCategories.map { ($0.name, $0.iconName) })
                #expect(categories == Self.seededCategories[group.name], "group \(group.name)")
                #expect(full.itemCategories.map(\.name) == full.itemCategories.map(\.name).sorted())
                #expect(full.itemCategories.allSatisfy { $0.categoryGroupID == group.id })
            }
            let all = try await client.call(ItemCategoryMethods.listItemCategories, ListItemCategoriesRequest())
            #expect(all.itemCategories.count == 12)
        }
    }

    @Test(arguments: Backend.all)
    func categoryLifecycleAcrossGroups(backend: Backend) async throws {
        try await withServer(backend) { _, client in
            let snacks = try await client.call(CategoryGroupMethods.createCategoryGroup, CreateCategoryGroupRequest(
                categoryGroup: CategoryGroup(name: "零食櫃", colorHex: "#112233")))
            let other = try await client.call(CategoryGroupMethods.createCategoryGroup, CreateCategoryGroupRequest(
                categoryGroup: CategoryGroup(name: "Other", colorHex: "#445566")))
            let chips = try await client.call(ItemCategoryMethods.createItemCategory, CreateItemCategoryRequest(
                itemCategory: ItemCategory(name: "零食", iconName: "takeoutbag.and.cup.and.straw.fill",
                                           categoryGroupID: snacks.id)))
            #expect(chips.categoryGroupID == snacks.id)
            // Same name in another group is fine; twice in one group is not.
            _ = try await client.call(ItemCategoryMethods.createItemCategory, CreateItemCategoryRequest(
                itemCategory: ItemCategory(name: "零食", iconName: "star", categoryGroupID: other.id)))
            await expectStatus(.alreadyExists) {
                try await client.call(ItemCategoryMethods.createItemCategory, CreateItemCategoryRequest(
                    itemCategory: ItemCategory(name: "零食", iconName: "star", categoryGroupID: snacks.id)))
            }
            await expectStatus(.failedPrecondition) {
                try await client.call(ItemCategoryMethods.createItemCategory, CreateItemCategoryRequest(
                    itemCategory: ItemCategory(name: "Orphan", iconName: "star",
                                               categoryGroupID: "00000000-0000-4000-8000-000000000000")))
            }
            let onlySnacks = try await client.call(ItemCategoryMethods.listItemCategories,
                                                   ListItemCategoriesRequest(categoryGroupID: snacks.id))
            #expect(onlySnacks.itemCategories.map(\.id) == [chips.id])

            let moved = try await client.call(ItemCategoryMethods.updateItemCategory, UpdateItemCategoryRequest(
                itemCategory: ItemCategory(id: chips.id, name: "Crisps", categoryGroupID: other.id),
                updateMask: ["category_group_id", "name"]))
            #expect(moved.categoryGroupID == other.id && moved.name == "Crisps" && moved.iconName == chips.iconName)

            let fetched = try await client.call(ItemCategoryMethods.getItemCategory, GetItemCategoryRequest(id: moved.id))
            #expect(fetched == moved)

            let recolored = try await client.call(CategoryGroupMethods.updateCategoryGroup, UpdateCategoryGroupRequest(
                categoryGroup: CategoryGroup(id: snacks.id, colorHex: "#abcdef"), updateMask: ["color_hex"]))
            #expect(recolored.colorHex == "#ABCDEF" && recolored.name == "零食櫃")
            await expectStatus(.alreadyExists) {
                try await client.call(CategoryGroupMethods.updateCategoryGroup, UpdateCategoryGroupRequest(
                    categoryGroup: CategoryGroup(id: snacks.id, name: "食品"), updateMask: ["name"]))
            }
            await expectStatus(.failedPrecondition) {
                try await client.call(ItemCategoryMethods.updateItemCategory, UpdateItemCategoryRequest(
                    itemCategory: ItemCategory(id: moved.id, categoryGroupID: "00000000-0000-4000-8000-000000000000"),
                    updateMask: ["category_group_id"]))
            }
            let lone = try await client.call(ItemCategoryMethods.createItemCategory, CreateItemCategoryRequest(
                itemCategory: ItemCategory(name: "Lone", iconName: "star", categoryGroupID: snacks.id)))
            _ = try await client.call(ItemCategoryMethods.deleteItemCategory, DeleteItemCategoryRequest(id: lone.id))
            await expectStatus(.notFound) {
                try await client.call(ItemCategoryMethods.deleteItemCategory, DeleteItemCategoryRequest(id: lone.id))
            }
            await expectStatus(.failedPrecondition) {
                try await client.call(CategoryGroupMethods.deleteCategoryGroup, DeleteCategoryGroupRequest(id: other.id))
            }
            _ = try await client.call(CategoryGroupMethods.deleteCategoryGroup,
                                      DeleteCategoryGroupRequest(id: other.id, cascade: true))
            await expectStatus(.notFound) {
                try await client.call(ItemCategoryMethods.getItemCategory, GetItemCategoryRequest(id: chips.id))
            }
            await expectStatus(.notFound) {
                try await client.call(CategoryGroupMethods.getCategoryGroup, GetCategoryGroupRequest(id: other.id))
            }
            _ = try await client.call(CategoryGroupMethods.deleteCategoryGroup, DeleteCategoryGroupRequest(id: snacks.id))
            await expectStatus(.alreadyExists) {
                try await client.call(CategoryGroupMethods.createCategoryGroup, CreateCategoryGroupRequest(
                    categoryGroup: CategoryGroup(name: "食品", colorHex: "#112233")))
            }
        }
    }
}
