import LarderAPI
import LarderJSON
import LarderWire

/// `larder groups list|get|add|update|delete`.
enum GroupCommands {
    static let resource = ResourceSpec(
        name: "groups", summary: "Category groups: the big categories such as 食品 (food)",
        commands: [list, get, add, update, delete])

    static let list = CommandSpec(
        resource: "groups", name: "list", summary: "List all category groups, sorted by name",
        examples: ["larder groups list"]
    ) { _, context throws(CLIError) in
        let response = try await context.allCategoryGroups()
        try context.emit(response, ids: { response.categoryGroups.map(\.id) }, json: withoutCategories) {
            HumanOutput.categoryGroups(response.categoryGroups, width: context.tableWidth)
        }
    }

    static let get = CommandSpec(
        resource: "groups", name: "get",
        summary: "Show one category group (ID: an id, a prefix of 8+ characters, or the name)", positionals: ["ID"],
        options: [.flag("with-categories", "Also list the group's item categories, sorted by name "
                        + "(without it, --json leaves out the itemCategories key rather than print [])")],
        examples: ["larder groups get ID --with-categories", "larder groups get 食品"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let withCategories = command.isSet("with-categories")
        let id = try await context.groupID(command.id)
        let group = try await context.call(
            CategoryGroupMethods.getCategoryGroup,
            GetCategoryGroupRequest(id: id, includeItemCategories: withCategories))
        try context.emit(group, ids: { [group.id] + (withCategories ? group.itemCategories.map(\.id) : []) },
                         json: { withCategories ? $0 : withoutCategories($0) }) {
            HumanOutput.categoryGroup(group, context.localTime, withCategories: withCategories, width: context.tableWidth)
        }
    }

    static let add = CommandSpec(
        resource: "groups", name: "add", summary: "Create a category group",
        options: [
            OptionSpec("name", value: "NAME", "The name, unique among groups", required: true),
            OptionSpec("color", value: "#RRGGBB", "The color", required: true),
            OptionSpec("id", value: "UUID", "Use this id instead of a server-generated one"),
        ],
        examples: ["larder groups add --name 園藝 --color '#2E8B57'"],
        fieldFlags: ["category_group.name": "--name", "category_group.color_hex": "--color", "category_group.id": "--id"]
    ) { command, context throws(CLIError) in
        let group = CategoryGroup(id: command.value("id") ?? "", name: command.value("name") ?? "",
                                  colorHex: command.value("color") ?? "")
        let created = try await context.call(CategoryGroupMethods.createCategoryGroup,
                                             CreateCategoryGroupRequest(categoryGroup: group))
        try context.emit(created, ids: { [created.id] }, json: withoutCategories) {
            HumanOutput.categoryGroup(created, context.localTime, withCategories: false)
        }
    }

    static let update = CommandSpec(
        resource: "groups", name: "update", summary: "Change the given fields of a category group",
        positionals: ["ID"],
        options: [
            OptionSpec("name", value: "NAME", "The new name"),
            OptionSpec("color", value: "#RRGGBB", "The new color"),
        ],
        examples: ["larder groups update ID --name 食物"],
        fieldFlags: ["category_group.name": "--name", "category_group.color_hex": "--color", "category_group.id": "ID"]
    ) { command, context throws(CLIError) in
        let mask = try command.updateMask([("name", "name"), ("color", "color_hex")])
        let id = try await context.groupID(command.id)
        let group = CategoryGroup(id: id, name: command.value("name") ?? "",
                                  colorHex: command.value("color") ?? "")
        let updated = try await context.call(CategoryGroupMethods.updateCategoryGroup,
                                             UpdateCategoryGroupRequest(categoryGroup: group, updateMask: mask))
        try context.emit(updated, ids: { [updated.id] }, json: withoutCategories) {
            HumanOutput.categoryGroup(updated, context.localTime, withCategories: false)
        }
    }

    static let delete = CommandSpec(
        resource: "groups", name: "delete", summary: "Delete a category group", positionals: ["ID"],
        options: [.flag("cascade", "Also delete its item categories (otherwise a non-empty group is not deleted)")],
        examples: ["larder groups delete ID --cascade"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let cascade = command.isSet("cascade")
        let id = try await context.groupID(command.id)
        let reply: Empty
        do throws(CLIError) {
            reply = try await context.call(CategoryGroupMethods.deleteCategoryGroup,
                                           DeleteCategoryGroupRequest(id: id, cascade: cascade))
        } catch {
            // The server says "set cascade", the request's field: name the flag.
            if case .rpc(let rpc) = error, rpc.code == .failedPrecondition, rpc.message.hasSuffix("set cascade") {
                throw .rpc(RPCError(rpc.code, rpc.message + " (--cascade)"))
            }
            throw error
        }
        try context.emit(reply, ids: { [id] }) {
            "Deleted category group \(TerminalText.value(id))\(cascade ? " and its item categories" : "").\n"
        }
    }

    /// The `--json` of a group, or of `ListCategoryGroupsResponse`'s groups, without the `itemCategories`
    /// key: the server fills it only for `get --with-categories`, and `[]` would read as "no categories".
    static func withoutCategories(_ json: JSON) -> JSON {
        guard case .object(let members) = json else { return json }
        return .object(members.compactMap { member in
            switch (member.key, member.value) {
            case ("itemCategories", _):
                nil
            case ("categoryGroups", .array(let groups)):
                JSON.Member(member.key, .array(groups.map(withoutCategories)))
            default:
                member
            }
        })
    }
}
