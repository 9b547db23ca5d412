import CProtobufC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds `string` fields that hold a NUL byte, by walking the wire bytes of a
/// message with its descriptor.
///
/// protobuf-c unpacks a string into a NUL-terminated C string, so Swift would
/// read `"ab\0cd"` as `"ab"`: a value other than the one the peer sent. The
/// lengths are gone once a message is unpacked, hence this walk over the
/// bytes. It assumes protobuf-c already accepted them and stops quietly at
/// anything malformed.
enum StringFieldScan {
    /// Deeper nesting than any message in proto/ has.
    static let maxDepth = 32

    /// The dotted path of the first string field holding a NUL byte (e.g.
    /// `location.name`), or nil when there is none.
    static func fieldWithNUL(in bytes: UnsafeRawBufferPointer,
                             of descriptor: UnsafePointer<ProtobufCMessageDescriptor>) -> String? {
        // No zero byte at all, no NUL in any string: the common case costs one memchr.
        guard let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil else { return nil }
        return scan(bytes, descriptor, depth: 0)
    }

    private static func scan(_ bytes: UnsafeRawBufferPointer,
                             _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>, depth: Int) -> String? {
        guard depth < maxDepth else { return nil }
        var reader = WireReader(bytes: bytes)
        while !reader.isAtEnd {
            guard let tag = reader.varint(), tag >> 3 <= UInt64(UInt32.max) else { return nil }
            // nil: cut off, or groups (3, 4) and wire types 6, 7, which protobuf-c rejects.
            guard let fieldValue = reader.value(wireType: tag & 7) else { return nil }
            guard case .lengthDelimited(let value) = fieldValue else { continue }
            guard let field = protobuf_c_message_descriptor_get_field(descriptor, UInt32(tag >> 3)) else {
                continue  // an unknown field: protobuf-c keeps it aside, nobody reads it
            }
            switch field.pointee.type {
            case PROTOBUF_C_TYPE_STRING:
                if value.contains(0) { return String(cString: field.pointee.name) }
            case PROTOBUF_C_TYPE_MESSAGE:
                guard let nested = field.pointee.descriptor else { continue }
                let nestedDescriptor = nested.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                if let path = scan(value, nestedDescriptor, depth: depth + 1) {
                    return String(cString: field.pointee.name) + "." + path
                }
            default:
                continue  // bytes, or a packed repeated scalar
            }
        }
        return nil
    }
}
