import Foundation
import LarderAPI
import LarderClient
import LarderJSON
import LarderSystem
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
        options: [
            OptionSpec("data", short: "d", value: "JSON",
                       "The request: JSON text, @FILE to read it from a file, or @- for stdin (instead of the JSON argument)"),
            .flag("emit-defaults", "Also print fields that hold their default value (0, \"\", [], false); "
                  + "--json (-o json) does too, as for every command"),
        ],
        examples: [
            "larder call /larder.v1.LocationService/ListLocations",
            "larder call /larder.v1.LocationService/GetLocation -d '{\"id\": \"6f1c2d9e-4b7a-4c1e-9a53-0d2b8c7e5f10\"}'",
            "larder call /larder.v1.MealRecordService/CreateMealRecord -d @meal.json",
            "echo '{\"mealRecord\": {\"name\": \"Oatmeal\", \"calories\": 350, \"category\": \"MEAL_CATEGORY_BREAKFAST\"}}' \\\n"
                + "    | larder call /larder.v1.MealRecordService/CreateMealRecord -d @-",
        ],
        // The reply is printed as JSON whatever -o says: there are no ids to print alone.
        printsIDs: false
    ) { command, context throws(CLIError) in
        let path = command.positionals[0]
        let method = try resolve(path, spec: command.spec)
        let text = try requestText(command)
        let payload: [UInt8]
        do throws(RPCError) {
            payload = try ProtoJSON.binary(fromJSON: text.allSatisfy(\.isWhitespace) ? "{}" : text,
                                           type: method.input)
        } catch {
            throw .usage("request JSON for \(method.path) (\(method.input.name)): \(error.message)",
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
            let json = try ProtoJSON.json(fromBinary: reply, type: method.output,
                                          options: jsonOptions(command, context))
            context.write(json)
        } catch {
            throw .rpc(RPCError(.internal, "reply of \(method.path) does not convert to JSON: \(error.message)"))
        }
    }

    /// How the reply is printed: without the fields at their default value, unless `--emit-defaults`
    /// or `--json` (`-o json`), which includes them for every command (`CommandContext.jsonOptions`).
    static func jsonOptions(_ command: ParsedCommand, _ context: CommandContext) -> ProtoJSON.Options {
        command.isSet("emit-defaults") || context.globals.output == .json
            ? CommandContext.jsonOptions : ProtoJSON.Options(emitDefaults: false)
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

    /// The largest request read from a file or stdin (the frame limit is 4 MiB).
    static let maxInputBytes = 64 << 20

    /// The request JSON: `-d TEXT|@FILE|@-`, the JSON argument, or stdin.
    /// - Throws: a usage error when both are given, the file cannot be read, or the bytes are not UTF-8.
    static func requestText(_ command: ParsedCommand) throws(CLIError) -> String {
        let argument = command.positionals.count > 1 ? command.positionals[1] : nil
        guard let data = command.value("data") else {
            guard let argument, argument != "-" else { return try utf8(readStandardInput(), from: "stdin", command) }
            return argument
        }
        if argument != nil { throw .usage("give the request as JSON or with -d, not both", command.spec) }
        guard data.hasPrefix("@") else { return data }
        let path = String(data.dropFirst())
        if path == "-" { return try utf8(readStandardInput(), from: "stdin", command) }
        guard !path.isEmpty else { throw .usage("-d @FILE needs a file name, or @- for stdin", command.spec) }
        let contents: [UInt8]
        do throws(FileContents.Failure) {
            contents = try FileContents.read(path, maxBytes: maxInputBytes)
        } catch .tooLarge(let count) {
            throw .usage("-d @\(path): the file is \(count) bytes or more, above \(maxInputBytes)", command.spec)
        } catch {
            throw .usage("-d @\(path): cannot read the file (\(error.reason))", command.spec)
        }
        return try utf8(contents, from: path, command)
    }

    /// `bytes` as text, refused (never altered) when they are not valid UTF-8; a leading UTF-8
    /// byte-order mark (Notepad writes one) is skipped, as RFC 8259 §8.1 allows.
    static func utf8(_ bytes: [UInt8], from source: String, _ command: ParsedCommand) throws(CLIError) -> String {
        let markLength = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let bytes = markLength == 0 ? bytes : Array(bytes.dropFirst(markLength))
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        let offset = UTF8Check.firstInvalidOffset(bytes) ?? 0
        throw .usage("the request JSON from \(source) is not valid UTF-8 (byte \(offset + markLength) is "
                     + "0x\(String(bytes[min(offset, bytes.count - 1)], radix: 16, uppercase: true))); "
                     + "larder sends text unchanged and will not guess", command.spec)
    }

    /// All of stdin; empty when stdin is a terminal (nothing was piped).
    static func readStandardInput() -> [UInt8] {
        if isatty(0) == 1 { return [] }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < maxInputBytes {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
