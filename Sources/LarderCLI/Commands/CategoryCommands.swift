import LarderAPI

/// `larder categories list|get|add|update|delete`.
enum CategoryCommands {
    static let resource = ResourceSpec(
        name: "categories", summary: "Item categories, each in one category group",
        commands: [list, get, add, update, delete])

    static let list = CommandSpec(
        resource: "categories", name: "list", summary: "List item categories sorted by name, optionally of one group",
        options: [OptionSpec("group", value: "GROUP", "Only the categories of this group (id, id prefix or name)")],
        examples: ["larder categories list", "larder categories list --group 食品"],
        fieldFlags: ["category_group_id": "--group"]
    ) { command, context throws(CLIError) in
        let group = try await command.value("group").asyncMap { text throws(CLIError) in
            try await context.groupID(text, argument: "--group")
        }
        let response = try await context.allItemCategories(groupID: group ?? "")
        // The table shows group names rather than ids; it falls back to the ids if the groups cannot be listed.
        var names: [String: String] = [:]
        if context.globals.output == .table,
           let groups = try? await context.allCategoryGroups() {
            names = Dictionary(groups.categoryGroups.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        }
        try context.emit(response, ids: { response.itemCategories.map(\.id) }) {
            HumanOutput.itemCategories(response.itemCategories, groupNames: names, width: context.tableWidth)
        }
    }

    static let get = CommandSpec(
        resource: "categories", name: "get",
        summary: "Show one item category (ID: an id, a prefix of 8+ characters, or the name)", positionals: ["ID"],
        examples: ["larder categories get ID", "larder categories get 零食"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let id = try await context.categoryID(command.id)
        let category = try await context.call(ItemCategoryMethods.getItemCategory, GetItemCategoryRequest(id: id))
        let groupName = await context.groupNameForTable(category.categoryGroupID)
        try context.emit(category, ids: { [category.id] }) {
            HumanOutput.itemCategory(category, groupName: groupName, context.localTime)
        }
    }

    static let add = CommandSpec(
        resource: "categories", name: "add", summary: "Create an item category in a group",
        options: [
            OptionSpec("group", value: "GROUP", "The group it belongs to (id, id prefix or name)", required: true),
            OptionSpec("name", value: "NAME", "The name, unique within the group", required: true),
            OptionSpec("icon", value: "ICON", "An SF Symbols-style icon name such as leaf.fill", required: true),
            OptionSpec("id", value: "UUID", "Use this id instead of a server-generated one"),
        ],
        examples: ["larder categories add --group 食品 --name 零食 --icon takeoutbag.and.cup.and.straw.fill"],
        fieldFlags: ["item_category.name": "--name", "item_category.icon_name": "--icon",
                     "item_category.category_group_id": "--group", "item_category.id": "--id"]
    ) { command, context throws(CLIError) in
        let group = try await context.groupID(command.value("group") ?? "", argument: "--group")
        let category = ItemCategory(id: command.value("id") ?? "", name: command.value("name") ?? "",
                                    iconName: command.value("icon") ?? "", categoryGroupID: group)
        let created = try await context.call(ItemCategoryMethods.createItemCategory,
                                             CreateItemCategoryRequest(itemCategory: category))
        let groupName = await context.groupNameForTable(created.categoryGroupID)
        try context.emit(created, ids: { [created.id] }) {
            HumanOutput.itemCategory(created, groupName: groupName, context.localTime)
        }
    }

    static let update = CommandSpec(
        resource: "categories", name: "update",
        summary: "Change the given fields of an item category, or move it to another group", positionals: ["ID"],
        options: [
            OptionSpec("name", value: "NAME", "The new name"),
            OptionSpec("icon", value: "ICON", "The new icon name"),
            OptionSpec("group", value: "GROUP", "Move it to this group (id, id prefix or name)"),
        ],
        examples: ["larder categories update ID --icon leaf.fill", "larder categories update ID --group GROUP"],
        fieldFlags: ["item_category.name": "--name", "item_category.icon_name": "--icon",
                     "item_category.category_group_id": "--group", "item_category.id": "ID"]
    ) { command, context throws(CLIError) in
        let mask = try command.updateMask([("name", "name"), ("icon", "icon_name"), ("group", "category_group_id")])
        let id = try await context.categoryID(command.id)
        let group = try await command.value("group").asyncMap { text throws(CLIError) in
            try await context.groupID(text, argument: "--group")
        }
        let category = ItemCategory(id: id, name: command.value("name") ?? "",
                                    iconName: command.value("icon") ?? "", categoryGroupID: group ?? "")
        let updated = try await context.call(ItemCategoryMethods.updateItemCategory,
                                             UpdateItemCategoryRequest(itemCategory: category, updateMask: mask))
        let groupName = await context.groupNameForTable(updated.categoryGroupID)
        try context.emit(updated, ids: { [updated.id] }) {
            HumanOutput.itemCategory(updated, groupName: groupName, context.localTime)
        }
    }

    static let delete = CommandSpec(
        resource: "categories", name: "delete", summary: "Delete an item category", positionals: ["ID"],
        examples: ["larder categories delete ID"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let id = try await context.categoryID(command.id)
        let reply = try await context.call(ItemCategoryMethods.deleteItemCategory, DeleteItemCategoryRequest(id: id))
        try context.emit(reply, ids: { [id] }) { "Deleted item category \(TerminalText.value(id)).\n" }
    }
}

extension Optional {
    /// The value mapped by an async throwing `transform`, or nil.
    func asyncMap<T>(_ transform: (Wrapped) async throws(CLIError) -> T) async throws(CLIError) -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
