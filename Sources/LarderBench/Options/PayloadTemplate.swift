import Foundation
import LarderJSON
import LarderSystem
public import LarderWire

/// A request in proto3 JSON with placeholders, rendered for every call (`--call ... -d`).
///
/// The syntax follows ghz: `{{.RequestNumber}}` (the call's number from 0,
/// warm-up included), `{{.Prefix}}` (this run's data prefix: locations and meal
/// records named with it are deleted after the run), `{{.UUID}}` (a random
/// UUID v4), `{{.Timestamp}}` (now, RFC 3339 UTC), `{{randomString N}}` (N
/// random letters and digits, 1-1000), `{{randomInt MIN MAX}}` (an integer in
/// MIN...MAX), `{{randomLocationID}}` / `{{randomMealID}}` (the id of one of the
/// locations / meal records the bench creates before the run). Placeholders
/// are replaced as text, so put those that make strings inside quotes.
public struct PayloadTemplate: Sendable, Equatable {
    /// One piece of the template text.
    enum Part: Sendable, Equatable {
        case literal(String)
        case requestNumber, prefix, uuid, timestamp, locationID, mealID
        case randomString(Int)
        case randomInt(Int64, Int64)
    }

    /// The template as given.
    public let text: String
    let parts: [Part]
    /// The request message type.
    let type: MessageDescriptor

    /// The placeholders, for `--help` and error messages.
    public static let syntax = "{{.RequestNumber}}, {{.Prefix}}, {{.UUID}}, {{.Timestamp}}, {{randomString N}}, "
        + "{{randomInt MIN MAX}}, {{randomLocationID}}, {{randomMealID}}"

    /// Parses `text` for requests of `type` and checks that one rendering converts.
    /// - Throws: INVALID_ARGUMENT naming the bad placeholder, or the JSON problem of a sample rendering.
    public init(parsing text: String, type: MessageDescriptor) throws(RPCError) {
        self.text = text
        self.type = type
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.literal(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw .invalidArgument("--data: \"{{\" without \"}}\"; placeholders are \(Self.syntax)")
            }
            parts.append(try Self.part(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.parts = parts
        var random = SplitMix64(seed: 1)
        let sample = render(number: 0, prefix: "larder-bench-sample", random: &random,
                            locationIDs: ["00000000-0000-4000-8000-000000000000"],
                            mealIDs: ["00000000-0000-4000-8000-000000000000"])
        do throws(RPCError) {
            _ = try ProtoJSON.binary(fromJSON: sample, type: type)
        } catch {
            throw .invalidArgument("--data for \(type.name): \(error.message) (in the sample rendering \(sample))")
        }
    }

    private static func part(_ inner: String) throws(RPCError) -> Part {
        let words = inner.split(separator: " ").map(String.init)
        func number(_ word: String) throws(RPCError) -> Int64 {
            guard let value = Int64(word) else {
                throw .invalidArgument("--data: {{\(inner)}}: \"\(word)\" is not an integer")
            }
            return value
        }
        switch words.first ?? "" {
        case ".RequestNumber" where words.count == 1: return .requestNumber
        case ".Prefix" where words.count == 1: return .prefix
        case ".UUID" where words.count == 1: return .uuid
        case ".Timestamp" where words.count == 1: return .timestamp
        case "randomLocationID" where words.count == 1: return .locationID
        case "randomMealID" where words.count == 1: return .mealID
        case "randomString" where words.count == 2:
            let length = try number(words[1])
            guard (1...1000).contains(length) else {
                throw .invalidArgument("--data: {{\(inner)}}: the length must be 1-1000")
            }
            return .randomString(Int(length))
        case "randomInt" where words.count == 3:
            let low = try number(words[1])
            let high = try number(words[2])
            guard low <= high else {
                throw .invalidArgument("--data: {{\(inner)}}: needs MIN <= MAX")
            }
            return .randomInt(low, high)
        default:
            throw .invalidArgument("--data: unknown placeholder {{\(inner)}}; use \(syntax)")
        }
    }

    /// Whether every rendering is the same (no placeholder but `.Prefix`).
    public var isConstant: Bool { parts.allSatisfy { if case .literal = $0 { true } else { $0 == .prefix } } }
    /// Whether it picks created locations or meal records.
    var usesLocationIDs: Bool { parts.contains(.locationID) }
    var usesMealIDs: Bool { parts.contains(.mealID) }

    /// The JSON text of call `number`.
    func render(number: Int, prefix: String, random: inout SplitMix64, locationIDs: [String], mealIDs: [String])
        -> String
    {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let text): out += text
            case .requestNumber: out += String(number)
            case .prefix: out += prefix
            case .uuid: out += Self.uuid(&random)
            case .timestamp: out += Self.timestamp()
            case .locationID: out += locationIDs.isEmpty ? "" : locationIDs[random.below(locationIDs.count)]
            case .mealID: out += mealIDs.isEmpty ? "" : mealIDs[random.below(mealIDs.count)]
            case .randomString(let length):
                let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
                for _ in 0..<length { out.append(alphabet[random.below(alphabet.count)]) }
            case .randomInt(let low, let high):
                let span = UInt64(bitPattern: high &- low) &+ 1
                let offset = span == 0 ? random.next() : random.next() % span
                out += String(low &+ Int64(bitPattern: offset))
            }
        }
        return out
    }

    /// The protobuf encoding of call `number`.
    /// - Throws: INVALID_ARGUMENT when this rendering does not fit the message.
    func encode(number: Int, prefix: String, random: inout SplitMix64, locationIDs: [String], mealIDs: [String])
        throws(RPCError) -> [UInt8]
    {
        let text = render(number: number, prefix: prefix, random: &random, locationIDs: locationIDs, mealIDs: mealIDs)
        do throws(RPCError) {
            return try ProtoJSON.binary(fromJSON: text, type: type)
        } catch {
            throw .invalidArgument("request \(number) from --data does not fit \(type.name): \(error.message) (\(text))")
        }
    }

    private static func uuid(_ random: inout SplitMix64) -> String {
        let high = random.next()
        let low = random.next()
        let hex = Array("0123456789abcdef")
        var out = ""
        for index in 0..<32 {
            var nibble = Int(((index < 16 ? high : low) >> (60 - UInt64(index % 16) * 4)) & 0xF)
            if index == 12 { nibble = 4 }
            if index == 16 { nibble = 8 | (nibble & 3) }
            if [8, 12, 16, 20].contains(index) { out.append("-") }
            out.append(hex[nibble])
        }
        return out
    }

    private static func timestamp() -> String {
        let now = wallClockSeconds()
        let seconds = Int64(now.rounded(.down))
        return RFC3339Timestamp.format(seconds: seconds, nanos: Int32((now - Double(seconds)) * 1e9)) ?? ""
    }

    public static func == (lhs: PayloadTemplate, rhs: PayloadTemplate) -> Bool {
        lhs.text == rhs.text && lhs.type.name == rhs.type.name
    }
}
