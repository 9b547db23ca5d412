import CNghttp2
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// The header fields of one gRPC method's requests, encoded once: an `nghttp2_nv` array over
/// memory this object owns, which nghttp2 reads without copying (NO_COPY flags) for every call
/// made with it. Immutable after init, so one block may serve many sessions on many threads.
public final class GRPCRequestHeaderBlock: @unchecked Sendable {
    // Sendable because the C memory is written in init only and read (by nghttp2) afterwards.
    private let storage: UnsafeMutableRawBufferPointer
    private let vector: UnsafeMutableBufferPointer<nghttp2_nv>
    /// The fields, in order (pseudo-headers first).
    public let fields: [(name: String, value: String)]

    /// The fields of a request for `path`: `:method POST`, `:scheme` (`https` over TLS, as
    /// gRPC's PROTOCOL-HTTP2.md asks), `:path`, `:authority`, content-type `application/grpc`,
    /// `te: trailers`, then `metadata` in order (keys lowercased; a `-bin` key's value is sent
    /// base64-encoded, unpadded, as gRPC senders do).
    public init(path: String, authority: String = "localhost", metadata: [(String, String)] = [], overTLS: Bool = false) {
        var fields: [(name: String, value: String)] = [
            (":method", "POST"), (":scheme", overTLS ? "https" : "http"), (":path", path), (":authority", authority),
            ("content-type", "application/grpc"), ("te", "trailers"),
        ]
        for (key, value) in metadata {
            let name = key.lowercased()
            fields.append((name, name.hasSuffix("-bin") ? Base64.encode(value.utf8, alphabet: .standard, padded: false) : value))
        }
        self.fields = fields
        let total = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        storage = .allocate(byteCount: max(total, 1), alignment: 1)
        vector = .allocate(capacity: fields.count)
        var offset = 0
        let flags = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        for (index, field) in fields.enumerated() {
            let name = Self.place(field.name, in: storage, at: &offset)
            let value = Self.place(field.value, in: storage, at: &offset)
            vector[index] = nghttp2_nv(name: name.pointer, value: value.pointer, namelen: name.count,
                                       valuelen: value.count, flags: flags)
        }
    }

    deinit {
        storage.deallocate()
        vector.deallocate()
    }

    /// The array nghttp2 takes; valid as long as this object lives.
    var nameValues: UnsafePointer<nghttp2_nv> { UnsafePointer(vector.baseAddress!) }
    var count: Int { vector.count }

    private static func place(_ text: String, in storage: UnsafeMutableRawBufferPointer, at offset: inout Int)
        -> (pointer: UnsafeMutablePointer<UInt8>, count: Int)
    {
        let bytes = Array(text.utf8)
        let start = storage.baseAddress!.advanced(by: offset)
        if !bytes.isEmpty { start.copyMemory(from: bytes, byteCount: bytes.count) }
        offset += bytes.count
        return (start.assumingMemoryBound(to: UInt8.self), bytes.count)
    }
}
