package import CProtobufC

/// Reading fields of unpacked protobuf-c structs into Swift values.
package enum CFields {
    /// The string at `pointer` (nil reads as empty).
    /// - Throws: INVALID_ARGUMENT naming `field` when it is not valid UTF-8.
    package static func string(_ pointer: UnsafePointer<CChar>?, field: String) throws(RPCError) -> String {
        guard let pointer, pointer.pointee != 0 else { return "" }
        guard let string = String(validatingCString: pointer) else {
            throw RPCError.invalidArgument("\(field) is not valid UTF-8")
        }
        return string
    }

    /// The bytes of a protobuf-c binary field.
    package static func bytes(_ data: ProtobufCBinaryData) -> [UInt8] {
        guard data.len > 0, let base = data.data else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: data.len))
    }

    /// The messages of a repeated message field, converted with `convert`.
    package static func messages<T, C>(
        _ items: UnsafeMutablePointer<UnsafeMutablePointer<C>?>?, count: Int,
        _ convert: (UnsafePointer<C>) throws(RPCError) -> T
    ) throws(RPCError) -> [T] {
        guard let items, count > 0 else { return [] }
        var result: [T] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            guard let item = items[index] else { continue }
            result.append(try convert(item))
        }
        return result
    }

    /// The strings of a repeated string field.
    package static func strings(
        _ items: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, count: Int, field: String
    ) throws(RPCError) -> [String] {
        guard let items, count > 0 else { return [] }
        var result: [String] = []
        result.reserveCapacity(count)
        for index in 0..<count { result.append(try string(items[index], field: field)) }
        return result
    }
}
