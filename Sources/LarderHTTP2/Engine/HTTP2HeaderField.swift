import CNghttp2

/// One header field as bytes, as it goes into or comes out of HPACK.
struct HTTP2HeaderField: Hashable, Sendable {
    var name: [UInt8]
    var value: [UInt8]

    init(_ name: String, _ value: String) {
        self.name = Array(name.utf8)
        self.value = Array(value.utf8)
    }

    init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// The size RFC 9113 §6.5.2 counts against SETTINGS_MAX_HEADER_LIST_SIZE.
    var listSize: Int { name.count + value.count + 32 }

    /// Calls `body` with the fields as an `nghttp2_nv` array that points into one
    /// contiguous copy, valid only during the call (nghttp2 copies what it keeps).
    static func withNameValueArray<R>(_ fields: [HTTP2HeaderField],
                                      _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
        var storage: [UInt8] = []
        storage.reserveCapacity(fields.reduce(0) { $0 + $1.name.count + $1.value.count })
        for field in fields {
            storage += field.name
            storage += field.value
        }
        return storage.withUnsafeMutableBufferPointer { bytes in
            var vector: [nghttp2_nv] = []
            vector.reserveCapacity(fields.count)
            var offset = 0
            for field in fields {
                let name = bytes.baseAddress.map { $0 + offset }
                let value = bytes.baseAddress.map { $0 + offset + field.name.count }
                offset += field.name.count + field.value.count
                vector.append(nghttp2_nv(name: name, value: value, namelen: field.name.count,
                                         valuelen: field.value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            return vector.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
        }
    }
}
