/// Which methods of proto/ stream, read from the serialized FileDescriptorProtos of
/// `APIFileDescriptors` (protobuf-c's method descriptors do not record `stream`; these do,
/// as MethodDescriptorProto's client_streaming = 5 and server_streaming = 6).
public enum APIStreaming {
    /// The sides of a method that stream.
    public struct Sides: Hashable, Sendable {
        /// The client sends a stream of requests.
        public let client: Bool
        /// The server sends a stream of responses.
        public let server: Bool

        public init(client: Bool, server: Bool) {
            self.client = client
            self.server = server
        }
    }

    /// Every streaming method of proto/ by wire path (`/grpc.health.v1.Health/Watch`); unary methods are absent.
    public static let methods: [String: Sides] = {
        var methods: [String: Sides] = [:]
        for file in APIFileDescriptors.files.values {
            for (path, sides) in streamingMethods(inFile: file.serialized) { methods[path] = sides }
        }
        return methods
    }()

    /// The sides of the method at `path` that stream; nil for a unary method or one proto/ does not have.
    public static func sides(of path: String) -> Sides? { methods[path] }

    /// The streaming methods a serialized FileDescriptorProto declares (package = 2, service = 6;
    /// ServiceDescriptorProto name = 1, method = 2; MethodDescriptorProto name = 1); empty when malformed.
    static func streamingMethods(inFile bytes: [UInt8]) -> [(String, Sides)] {
        guard let file = WireFields(bytes[...]) else { return [] }
        let package = file.strings(2).first ?? ""
        var found: [(String, Sides)] = []
        for serviceBytes in file.messages(6) {
            guard let service = WireFields(serviceBytes), let serviceName = service.strings(1).first else { continue }
            let qualified = package.isEmpty ? serviceName : "\(package).\(serviceName)"
            for methodBytes in service.messages(2) {
                guard let method = WireFields(methodBytes), let name = method.strings(1).first else { continue }
                let sides = Sides(client: method.varint(5) != 0, server: method.varint(6) != 0)
                if sides.client || sides.server { found.append(("/\(qualified)/\(name)", sides)) }
            }
        }
        return found
    }
}

/// The fields of one protobuf message on the wire: varints and length-delimited values by number.
private struct WireFields {
    private var varints: [UInt64: UInt64] = [:]
    private var delimited: [(number: UInt64, value: ArraySlice<UInt8>)] = []

    /// Reads `bytes`; nil when they are not a well-formed message.
    init?(_ bytes: ArraySlice<UInt8>) {
        var index = bytes.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while index < bytes.endIndex {
            guard let key = varint() else { return nil }
            let number = key >> 3
            switch key & 7 {
            case 0:
                guard let value = varint() else { return nil }
                varints[number] = value
            case 1, 5:
                let width = key & 7 == 1 ? 8 : 4
                guard bytes.endIndex - index >= width else { return nil }
                index += width
            case 2:
                guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return nil }
                let end = index + Int(length)
                delimited.append((number, bytes[index..<end]))
                index = end
            default:
                return nil
            }
        }
    }

    /// The last value of varint field `number`, 0 when absent (proto3's default).
    func varint(_ number: UInt64) -> UInt64 { varints[number] ?? 0 }

    /// The values of length-delimited field `number`, in order.
    func messages(_ number: UInt64) -> [ArraySlice<UInt8>] {
        delimited.filter { $0.number == number }.map(\.value)
    }

    /// The values of string field `number` that are valid UTF-8, in order.
    func strings(_ number: UInt64) -> [String] {
        messages(number).compactMap { String(validating: $0, as: UTF8.self) }
    }
}
