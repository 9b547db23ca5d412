public import LarderAPI
import LarderWire

/// Reflection results as .proto source, the way grpcurl's `describe` shows them. Every name
/// comes from the server, so each passes through `TerminalText.value` (`name(_:)`).
public enum ProtoSource {
    /// One row per method: wire name, request type, response type, `stream ` before a side that streams
    /// (as this build's proto/ declares it: reflection does not say), and a note under the table when one does.
    public static func methodTable(_ services: [ServiceInfo], width: Int? = nil) -> String {
        var streams = false
        let rows = services.flatMap { service in
            service.methods.map { method in
                let sides = APIStreamingMethods.all[method.fullName]
                if sides != nil { streams = true }
                return [method.fullName, (sides?.client == true ? "stream " : "") + method.inputType,
                        (sides?.server == true ? "stream " : "") + method.outputType]
            }
        }
        // The method tells the rows apart: the types give way first.
        let columns = ["METHOD", "REQUEST", "RESPONSE"].map { title in
            TableRenderer.Column(title, shrinksTo: 16, truncation: .middle, shrinkRank: title == "METHOD" ? 1 : 0)
        }
        let table = TableRenderer(columns: columns, rows: rows, maxWidth: width).render()
        return streams ? table + streamingNote : table
    }

    /// Under a method table or a service that has streaming methods.
    static let streamingNote = "stream: streaming, over gRPC (HTTP/2) only; larder call gets UNIMPLEMENTED\n"

    public static func service(_ service: ServiceInfo) -> String {
        var text = "\(name(service.name)) is a service:\nservice \(shortName(service.name)) {\n"
        for method in service.methods { text += "  " + rpc(method) + "\n" }
        text += "}\n"
        return service.methods.contains { APIStreamingMethods.all[$0.fullName] != nil } ? text + streamingNote : text
    }

    public static func method(_ method: MethodInfo, of service: ServiceInfo) -> String {
        let text = "\(name(service.name)).\(name(method.name)) is a method:\n\(rpc(method))\n"
        return APIStreamingMethods.all[method.fullName] != nil ? text + streamingNote : text
    }

    public static func type(_ response: DescribeTypeResponse) -> String {
        switch response.type {
        case .messageType(let message):
            var text = "\(name(message.name)) is a message:\nmessage \(shortName(message.name)) {\n"
            if message.mapEntry { text += "  option map_entry = true;\n" }
            for field in message.fields { text += "  " + self.field(field) + "\n" }
            return text + "}\n"
        case .enumType(let type):
            var text = "\(name(type.name)) is an enum:\nenum \(shortName(type.name)) {\n"
            for value in type.values { text += "  \(name(value.name)) = \(value.number);\n" }
            return text + "}\n"
        case nil:
            return "(the server described nothing)\n"
        }
    }

    /// `repeated .larder.v1.Location locations = 1;`, `map<string, string> metadata = 5;`,
    /// with the JSON name in a comment when it differs.
    static func field(_ field: FieldInfo) -> String {
        var text: String
        if let (key, value) = field.map {
            text = "map<\(typeName(key)), \(typeName(value))> \(name(field.name)) = \(field.number);"
        } else {
            let label = switch field.label {
            case .repeated: "repeated "
            case .optional: "optional "
            case .required: "required "
            case .singular, .unspecified, .unrecognized: ""
            }
            text = "\(label)\(typeName(field)) \(name(field.name)) = \(field.number);"
        }
        var notes: [String] = []
        if field.jsonName != field.name { notes.append("JSON: \(name(field.jsonName))") }
        if field.inOneof { notes.append("in a oneof") }
        if !notes.isEmpty { text += "  // " + notes.joined(separator: "; ") }
        return text
    }

    static func typeName(_ field: FieldInfo) -> String {
        field.type == .message || field.type == .enum ? ".\(name(field.typeName))" : field.type.keyword
    }

    /// `rpc Watch ( .grpc.health.v1.HealthCheckRequest ) returns ( stream .grpc.health.v1.HealthCheckResponse );`:
    /// `stream` where this build's proto/ declares it (the server's reflection does not say).
    static func rpc(_ method: MethodInfo) -> String {
        let sides = APIStreamingMethods.all[method.fullName]
        let input = (sides?.client == true ? "stream ." : ".") + name(method.inputType)
        let output = (sides?.server == true ? "stream ." : ".") + name(method.outputType)
        return "rpc \(name(method.name)) ( \(input) ) returns ( \(output) );"
    }

    static func shortName(_ fullName: String) -> String {
        name(fullName.split(separator: ".").last.map(String.init) ?? fullName)
    }

    /// A name the server sent, escaped to stay on its line.
    static func name(_ text: String) -> String {
        TerminalText.value(text)
    }
}
