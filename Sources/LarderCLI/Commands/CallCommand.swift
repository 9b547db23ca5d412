import LarderAPI
import LarderJSON
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// `larder call METHOD [JSON]`: any method, request and reply in the proto3
/// JSON mapping, converted with the descriptors compiled into this build.
enum CallCommand {
    static let spec = CommandSpec(
        resource: nil, name: "call",
        summary: "Call any method with a JSON request (read from stdin when JSON is omitted or '-'); print the JSON reply",
        positionals: ["METHOD"], optionalPositionals: ["JSON"],
        options: [.flag("emit-defaults", "Also print fields that hold their default value (0, \"\", [], false)")],
        examples: [
            "larder call /larder.v1.LocationService/ListLocations",
            "larder call /larder.v1.LocationService/GetLocation '{\"id\": \"6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10\"}'",
            "echo '{\"mealRecord\": {\"name\": \"Oatmeal\", \"calories\": 350, \"category\": \"MEAL_CATEGORY_BREAKFAST\"}}' \\\n"
                + "    | larder call /larder.v1.MealRecordService/CreateMealRecord -",
        ]
    ) { command, context throws(CLIError) in
        let path = command.positionals[0]
        let method = try resolve(path, spec: command.spec)
        let text = command.positionals.count > 1 && command.positionals[1] != "-"
            ? command.positionals[1] : readStandardInput()
        let payload: [UInt8]
        do throws(RPCError) {
            payload = try ProtoJSON.binary(fromJSON: text.allSatisfy(\.isWhitespace) ? "{}" : text,
                                           type: MessageDescriptor(method.input))
        } catch {
            throw .usage("request JSON for \(method.path) (\(MessageDescriptor(method.input).name)): \(error.message)",
                         command.spec)
        }
        let client = try context.connect()
        let reply: [UInt8]
        do throws(RPCError) {
            reply = try await client.callRaw(path: method.path, payload: payload)
        } catch {
            throw .rpc(error)
        }
        do throws(RPCError) {
            let json = try ProtoJSON.json(fromBinary: reply, type: MessageDescriptor(method.output),
                                          options: ProtoJSON.Options(emitDefaults: command.isSet("emit-defaults")))
            context.write(json.rendered())
        } catch {
            throw .rpc(RPCError(.internal, "reply of \(method.path) does not convert to JSON: \(error.message)"))
        }
    }

    /// The method at `path` among the services this build knows.
    /// - Throws: a usage error naming the service's methods, or pointing at `larder methods`.
    static func resolve(_ path: String, spec: CommandSpec) throws(CLIError) -> MethodDescriptor {
        let catalog = DescriptorCatalog.compiled
        if let method = catalog.method(path: path) { return method }
        var text = Substring(path)
        if text.hasPrefix("/") { text = text.dropFirst() }
        if let slash = text.firstIndex(of: "/"), let service = catalog.service(named: String(text[..<slash])) {
            let names = service.methods.map(\.name).joined(separator: ", ")
            throw .usage("unknown method '\(path)'; \(service.name) has \(names)", spec)
        }
        throw .usage("unknown method '\(path)'; expected /package.Service/Method, e.g. "
                     + "/larder.v1.LocationService/GetLocation (see 'larder methods')", spec)
    }

    /// All of stdin as UTF-8 text; "" when stdin is a terminal (nothing was piped).
    static func readStandardInput() -> String {
        if isatty(0) == 1 { return "" }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < 64 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
