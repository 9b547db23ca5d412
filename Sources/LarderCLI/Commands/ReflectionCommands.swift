import LarderAPI
import LarderWire

/// `larder methods` and `larder describe NAME`, from the server's reflection service.
enum ReflectionCommands {
    static let methods = CommandSpec(
        resource: nil, name: "methods",
        summary: "List the services and methods the server serves ('stream': a streaming method, gRPC over HTTP/2 only)",
        options: [OptionSpec("service", value: "NAME", "Only this service, e.g. larder.v1.LocationService")],
        examples: ["larder methods", "larder methods --service larder.v1.MealRecordService", "larder methods --json"]
    ) { command, context throws(CLIError) in
        var response = try await context.call(ReflectionMethods.listServices, ListServicesRequest())
        if let name = command.value("service") {
            let wanted = name.hasPrefix(".") ? String(name.dropFirst()) : name
            response.services = response.services.filter { $0.name == wanted }
            guard !response.services.isEmpty else {
                throw .rpc(RPCError.notFound("the server serves no service \"\(name)\" (see 'larder methods')"))
            }
        }
        try context.emit(response, ids: { response.services.flatMap { service in service.methods.map(\.fullName) } }) {
            ProtoSource.methodTable(response.services, width: context.tableWidth)
        }
    }

    static let describe = CommandSpec(
        resource: nil, name: "describe",
        summary: "Describe a service, method, message or enum the server uses, as .proto source "
            + "('stream' as larder's own proto/ declares it)",
        positionals: ["NAME"],
        examples: ["larder describe larder.v1.Location", "larder describe larder.v1.MealCategory",
                   "larder describe larder.v1.LocationService", "larder describe /larder.v1.LocationService/GetLocation"],
        printsIDs: false
    ) { command, context throws(CLIError) in
        var name = Substring(command.positionals[0])
        while name.hasPrefix(".") || name.hasPrefix("/") { name = name.dropFirst() }
        let services = try await context.call(ReflectionMethods.listServices, ListServicesRequest()).services
        if let service = services.first(where: { $0.name == name }) {
            try context.emit(ListServicesResponse(services: [service])) { ProtoSource.service(service) }
            return
        }
        for service in services {
            for method in service.methods where name == "\(service.name).\(method.name)" || name == "\(service.name)/\(method.name)" {
                let only = ServiceInfo(name: service.name, methods: [method])
                try context.emit(ListServicesResponse(services: [only])) { ProtoSource.method(method, of: service) }
                return
            }
        }
        let response = try await context.call(ReflectionMethods.describeType, DescribeTypeRequest(name: String(name)))
        try context.emit(response) { ProtoSource.type(response) }
    }
}
