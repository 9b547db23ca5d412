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
        let response = try await context.call(LocationMethods.listLocations, ListLocationsRequest())
        try context.emit(response) { HumanOutput.locations(response.locations) }
    }

    static let get = CommandSpec(
        resource: "locations", name: "get", summary: "Show one location", positionals: ["ID"],
        examples: ["larder locations get 6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10"]
    ) { command, context throws(CLIError) in
        let location = try await context.call(LocationMethods.getLocation, GetLocationRequest(id: command.id))
        try context.emit(location) { HumanOutput.location(location, context.localTime) }
    }

    static let add = CommandSpec(
        resource: "locations", name: "add", summary: "Create a location",
        options: [
            OptionSpec("name", value: "NAME", "The name, unique among locations", required: true),
            OptionSpec("color", value: "#RRGGBB", "The color", required: true),
            OptionSpec("id", value: "UUID", "Use this id instead of a server-generated one"),
        ],
        examples: ["larder locations add --name 玄關 --color '#AABBCC'"]
    ) { command, context throws(CLIError) in
        let location = Location(id: command.value("id") ?? "", name: command.value("name") ?? "",
                                colorHex: command.value("color") ?? "")
        let created = try await context.call(LocationMethods.createLocation, CreateLocationRequest(location: location))
        try context.emit(created) { HumanOutput.location(created, context.localTime) }
    }

    static let update = CommandSpec(
        resource: "locations", name: "update", summary: "Change the given fields of a location",
        positionals: ["ID"],
        options: [
            OptionSpec("name", value: "NAME", "The new name"),
            OptionSpec("color", value: "#RRGGBB", "The new color"),
        ],
        examples: ["larder locations update ID --color '#112233'"]
    ) { command, context throws(CLIError) in
        let mask = try command.updateMask([("name", "name"), ("color", "color_hex")])
        let location = Location(id: command.id, name: command.value("name") ?? "",
                                colorHex: command.value("color") ?? "")
        let updated = try await context.call(LocationMethods.updateLocation,
                                             UpdateLocationRequest(location: location, updateMask: mask))
        try context.emit(updated) { HumanOutput.location(updated, context.localTime) }
    }

    static let delete = CommandSpec(
        resource: "locations", name: "delete", summary: "Delete a location", positionals: ["ID"],
        examples: ["larder locations delete ID"]
    ) { command, context throws(CLIError) in
        let reply = try await context.call(LocationMethods.deleteLocation, DeleteLocationRequest(id: command.id))
        try context.emit(reply) { "Deleted location \(command.id).\n" }
    }
}
