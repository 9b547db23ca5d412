import LarderAPI

/// `larder locations list|get|add|update|delete`.
enum LocationCommands {
    static let resource = ResourceSpec(
        name: "locations", summary: "Rooms and areas of the home",
        commands: [list, get, add, update, delete])

    static let list = CommandSpec(
        resource: "locations", name: "list", summary: "List all locations, sorted by name",
        examples: ["larder locations list", "larder locations list --json"]
    ) { _, context throws(CLIError) in
        let response = try await context.allLocations()
        try context.emit(response, ids: { response.locations.map(\.id) }) {
            HumanOutput.locations(response.locations, width: context.tableWidth)
        }
    }

    static let get = CommandSpec(
        resource: "locations", name: "get", summary: "Show one location (ID: an id, a prefix of 8+ characters, or the name)",
        positionals: ["ID"],
        examples: ["larder locations get 6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10", "larder locations get 6f1c2d9e",
                   "larder locations get 客廳"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let id = try await context.locationID(command.id)
        let location = try await context.call(LocationMethods.getLocation, GetLocationRequest(id: id))
        try context.emit(location, ids: { [location.id] }) { HumanOutput.location(location, context.localTime) }
    }

    static let add = CommandSpec(
        resource: "locations", name: "add", summary: "Create a location",
        options: [
            OptionSpec("name", value: "NAME", "The name, unique among locations", required: true),
            OptionSpec("color", value: "#RRGGBB", "The color", required: true),
            OptionSpec("id", value: "UUID", "Use this id instead of a server-generated one"),
        ],
        examples: ["larder locations add --name 玄關 --color '#AABBCC'"],
        fieldFlags: ["location.name": "--name", "location.color_hex": "--color", "location.id": "--id"]
    ) { command, context throws(CLIError) in
        let location = Location(id: command.value("id") ?? "", name: command.value("name") ?? "",
                                colorHex: command.value("color") ?? "")
        let created = try await context.call(LocationMethods.createLocation, CreateLocationRequest(location: location))
        try context.emit(created, ids: { [created.id] }) { HumanOutput.location(created, context.localTime) }
    }

    static let update = CommandSpec(
        resource: "locations", name: "update", summary: "Change the given fields of a location",
        positionals: ["ID"],
        options: [
            OptionSpec("name", value: "NAME", "The new name"),
            OptionSpec("color", value: "#RRGGBB", "The new color"),
        ],
        examples: ["larder locations update ID --color '#112233'"],
        fieldFlags: ["location.name": "--name", "location.color_hex": "--color", "location.id": "ID"]
    ) { command, context throws(CLIError) in
        let mask = try command.updateMask([("name", "name"), ("color", "color_hex")])
        let id = try await context.locationID(command.id)
        let location = Location(id: id, name: command.value("name") ?? "",
                                colorHex: command.value("color") ?? "")
        let updated = try await context.call(LocationMethods.updateLocation,
                                             UpdateLocationRequest(location: location, updateMask: mask))
        try context.emit(updated, ids: { [updated.id] }) { HumanOutput.location(updated, context.localTime) }
    }

    static let delete = CommandSpec(
        resource: "locations", name: "delete", summary: "Delete a location", positionals: ["ID"],
        examples: ["larder locations delete ID"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let id = try await context.locationID(command.id)
        let reply = try await context.call(LocationMethods.deleteLocation, DeleteLocationRequest(id: id))
        try context.emit(reply, ids: { [id] }) { "Deleted location \(TerminalText.value(id)).\n" }
    }
}
