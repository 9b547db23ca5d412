import LarderAPI

/// `larder categories list|get|add|update|delete`.
enum CategoryCommands {
    static let resource = ResourceSpec(
        name: "categories", summary: "Item categories, each in one category group",
        commands: [list, get, add, update, delete])

    static let list = CommandSpec(
        resource: "categories", name: "list", summary: "List item categories sorted by name, optionally of one group",
        options: [OptionSpec("group", value: "GROUP_ID", "Only the categories of this group")],
        examples: ["larder categories list", "larder categories list --group GROUP_ID"]
    ) { command, context throws(CLIError) in
        let response = try await context.call(
            ItemCategoryMethods.listItemCategories,
            ListItemCategoriesRequest(categoryGroupID: command.value("group") ?? ""))
        // The table shows group names rather than ids; it falls back to the ids if the groups cannot be listed.
        var names: [String: String] = [:]
        if !context.globals.json,
           let groups = try? await context.call(CategoryGroupMethods.listCategoryGroups, ListCategoryGroupsRequest()) {
            names = Dictionary(groups.categoryGroups.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        }
        try context.emit(response) { HumanOutput.itemCategories(response.itemCategories, groupNames: names) }
    }

    static let get = CommandSpec(
        resource: "categories", name: "get", summary: "Show one item category", positionals: ["ID"],
        examples: ["larder categories get ID"]
    ) { command, context throws(CLIError) in
        let category = try await context.call(ItemCategoryMethods.getItemCategory, GetItemCategoryRequest(id: command.id))
        try context.emit(category) { HumanOutput.itemCategory(category, context.localTime) }
    }

    static let add = CommandSpec(
        resource: "categories", name: "add", summary: "Create an item category in a group",
        options: [
            OptionSpec("group", value: "GROUP_ID", "The group it belongs to", required: true),
            OptionSpec("name", value: "NAME", "The name, unique within the group", required: true),
            OptionSpec("icon", value: "ICON", "An SF Symbols-style icon name such as leaf.fill", required: true),
            OptionSpec("id", value: "UUID", "Use this id instead of a server-generated one"),
        ],
        examples: ["larder categories add --group GROUP_ID --name 零食 --icon takeoutbag.and.cup.and.straw.fill"]
    ) { command, context throws(CLIError) in
        let category = ItemCategory(id: command.value("id") ?? "", name: command.value("name") ?? "",
                                    iconName: command.value("icon") ?? "",
                                    categoryGroupID: command.value("group") ?? "")
        let created = try await context.call(ItemCategoryMethods.createItemCategory,
                                             CreateItemCategoryRequest(itemCategory: category))
        try context.emit(created) { HumanOutput.itemCategory(created, context.localTime) }
    }

    static let update = CommandSpec(
        resource: "categories", name: "update",
        summary: "Change the given fields of an item category, or move it to another group", positionals: ["ID"],
        options: [
            OptionSpec("name", value: "NAME", "The new name"),
            OptionSpec("icon", value: "ICON", "The new icon name"),
            OptionSpec("group", value: "GROUP_ID", "Move it to this group"),
        ],
        examples: ["larder categories update ID --icon leaf.fill", "larder categories update ID --group GROUP_ID"]
    ) { command, context throws(CLIError) in
        let mask = try command.updateMask([("name", "name"), ("icon", "icon_name"), ("group", "category_group_id")])
        let category = ItemCategory(id: command.id, name: command.value("name") ?? "",
                                    iconName: command.value("icon") ?? "",
                                    categoryGroupID: command.value("group") ?? "")
        let updated = try await context.call(ItemCategoryMethods.updateItemCategory,
                                             UpdateItemCategoryRequest(itemCategory: category, updateMask: mask))
        try context.emit(updated) { HumanOutput.itemCategory(updated, context.localTime) }
    }

    static let delete = CommandSpec(
        resource: "categories", name: "delete", summary: "Delete an item category", positionals: ["ID"],
        examples: ["larder categories delete ID"]
    ) { command, context throws(CLIError) in
        let reply = try await context.call(ItemCategoryMethods.deleteItemCategory,
                                           DeleteItemCategoryRequest(id: command.id))
        try context.emit(reply) { "Deleted item category \(command.id).\n" }
    }
}
