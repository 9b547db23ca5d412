public import LarderWire

/// `--call METHOD -d JSON`: the method every call goes to and its request template.
public struct CallSpec: Sendable, Equatable {
    /// `/package.Service/Method`.
    public var path: String
    /// The request in proto3 JSON with `{{...}}` placeholders (see `PayloadTemplate`).
    public var template: PayloadTemplate

    /// Whether the method only reads (Get…, List…, Summarize…, Check, …): then nothing is looked for to delete.
    public var isReadOnly: Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return ["Get", "List", "Summarize", "Check", "Watch", "ServerReflectionInfo"].contains { name.hasPrefix($0) }
    }

    /// Resolves `method` among the compiled services and parses `data`.
    /// Accepts `/pkg.Service/Method`, `pkg.Service/Method` and `pkg.Service.Method` (as ghz).
    /// - Throws: INVALID_ARGUMENT naming the method or the template's problem.
    public init(method: String, data: String) throws(RPCError) {
        var text = Substring(method)
        if text.hasPrefix("/") { text = text.dropFirst() }
        if !text.contains("/"), let dot = text.lastIndex(of: ".") {
            text = text[..<dot] + "/" + text[text.index(after: dot)...]
        }
        let path = "/" + text
        let catalog = DescriptorCatalog.compiled
        guard let descriptor = catalog.method(path: path) else {
            if let slash = text.firstIndex(of: "/"), let service = catalog.service(named: String(text[..<slash])) {
                throw .invalidArgument("--call: unknown method \"\(method)\"; \(service.name) has "
                    + service.methods.map(\.name).joined(separator: ", "))
            }
            throw .invalidArgument("--call: unknown method \"\(method)\"; expected /package.Service/Method, "
                + "e.g. /larder.v1.LocationService/ListLocations (see 'larder methods')")
        }
        self.path = descriptor.path
        template = try PayloadTemplate(parsing: data.isEmpty ? "{}" : data,
                                       type: descriptor.input)
    }
}
