import CNghttp2

/// Header fields that never change (the response HEADERS of a call, the trailer of one that
/// succeeded), laid out once as an `nghttp2_nv` array over memory that lives as long as the
/// process: nghttp2 takes them with NO_COPY flags, so submitting them copies no name or value.
/// nghttp2 still HPACK-encodes them per stream, so the bytes on the wire are the same as for
/// fields built per call.
final class HTTP2StaticHeaders: @unchecked Sendable {
    // Sendable because the memory is written in init only, then only read (by nghttp2).
    private let storage: UnsafeMutableRawBufferPointer
    private let vector: UnsafeMutableBufferPointer<nghttp2_nv>

    /// Meant for static constants (nghttp2 may read the memory until the response is sent).
    init(_ fields: [HTTP2HeaderField]) {
        let storage = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(1, fields.reduce(0) { $0 + $1.name.count + $1.value.count }), alignment: 1)
        let vector = UnsafeMutableBufferPointer<nghttp2_nv>.allocate(capacity: max(1, fields.count))
        let flags = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        var offset = 0
        func place(_ bytes: [UInt8]) -> UnsafeMutablePointer<UInt8>? {
            let target = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + bytes.count)])
            bytes.withUnsafeBytes { target.copyMemory(from: $0) }
            offset += bytes.count
            return target.baseAddress?.assumingMemoryBound(to: UInt8.self)
        }
        for (index, field) in fields.enumerated() {
            vector[index] = nghttp2_nv(name: place(field.name), value: place(field.value), namelen: field.name.count,
                                       valuelen: field.value.count, flags: flags)
        }
        self.storage = storage
        self.vector = vector
        count = fields.count
    }

    deinit {
        storage.deallocate()
        vector.deallocate()
    }

    /// The fields, as nghttp2 takes them.
    var nameValues: UnsafePointer<nghttp2_nv>? { UnsafePointer(vector.baseAddress) }
    let count: Int
}
