import CLarderProto
import CProtobufC
import LarderAPI
import LarderWire
import Testing

/// `APIFileDescriptors`, what the standard reflection service sends, covers every
/// service, method and message compiled into the server, and each file's bytes are its
/// FileDescriptorProto (field 1 = the file name, field 2 = its package).
@Suite("Generated file descriptors for server reflection")
struct FileDescriptorsTests {
    @Test("every service and method names the file that defines it")
    func servicesAndMethods() throws {
        for service in APIServices.all {
            let file = try #require(APIFileDescriptors.fileBySymbol[service.name], "\(service.name)")
            #expect(APIFileDescriptors.files[file] != nil)
            for method in service.methods {
                #expect(APIFileDescriptors.fileBySymbol["\(service.name).\(method.name)"] == file)
            }
        }
    }

    @Test("every compiled message type names its file, except the lean protocol's envelopes")
    func messages() {
        var count: UInt = 0
        let all = larder_proto_all_message_descriptors(&count)
        let names = (0..<Int(count)).map { String(cString: all[$0].pointee.name) }
        #expect(names.count > 50)
        let missing = names.filter { !$0.hasPrefix("larder.rpc.v1.") && APIFileDescriptors.fileBySymbol[$0] == nil }
        #expect(missing.isEmpty, "no file for \(missing)")
        #expect(names.filter { $0.hasPrefix("larder.rpc.v1.") }.allSatisfy { APIFileDescriptors.fileBySymbol[$0] == nil })
    }

    @Test("each file's bytes open with its name and package, and its imports are files too")
    func fileBytes() throws {
        #expect(APIFileDescriptors.files.count >= 10)
        for (name, file) in APIFileDescriptors.files {
            #expect(file.name == name)
            for dependency in file.dependencies {
                #expect(APIFileDescriptors.files[dependency] != nil, "\(name) imports \(dependency)")
            }
            var reader = FieldReader(bytes: file.serialized)
            let nameField = reader.lengthDelimited()
            let first = try #require(nameField, "\(name)")
            #expect(first.field == 1 && String(decoding: first.value, as: UTF8.self) == name)
            let packageField = reader.lengthDelimited()
            let second = try #require(packageField, "\(name)")
            let package = String(decoding: second.value, as: UTF8.self)
            #expect(second.field == 2 && name.hasPrefix(String(package.map { $0 == "." ? "/" : $0 })))
        }
    }

    /// Reads length-delimited fields from the start of a protobuf message.
    private struct FieldReader {
        let bytes: [UInt8]
        var offset = 0

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count && shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        mutating func lengthDelimited() -> (field: UInt64, value: ArraySlice<UInt8>)? {
            guard let key = varint(), key & 7 == 2, let length = varint(), offset + Int(length) <= bytes.count
            else { return nil }
            defer { offset += Int(length) }
            return (key >> 3, bytes[offset..<offset + Int(length)])
        }
    }
}
