import LarderWire

/// What the HEADERS of a gRPC request say, parsed and checked.
///
/// A value type whose text fields live in one shared, copy-on-write box: a head travels from
/// the session's event to the call core through several copies per call, and each copy costs
/// one retain instead of one per String.
public struct GRPCRequestHead: Hashable, Sendable {
    /// The HTTP/2 stream that carries the call.
    public var streamID: Int32
    /// `grpc-timeout` in nanoseconds (saturated), nil when absent.
    public var timeoutNanoseconds: UInt64?
    private var fields: Fields

    /// `:path`, e.g. `/larder.v1.Items/GetItem`: routes to the method.
    public var path: String {
        get { fields.path }
        set { mutableFields.path = newValue }
    }
    /// `:authority`, when sent.
    public var authority: String? {
        get { fields.authority }
        set { mutableFields.authority = newValue }
    }
    /// `content-type`: `application/grpc` or `application/grpc+proto`.
    public var contentType: String {
        get { fields.contentType }
        set { mutableFields.contentType = newValue }
    }
    /// `grpc-encoding` of the request messages; nil or "identity" when uncompressed.
    public var messageEncoding: String? {
        get { fields.messageEncoding }
        set { mutableFields.messageEncoding = newValue }
    }
    /// `grpc-accept-encoding`, as sent.
    public var acceptEncoding: String? {
        get { fields.acceptEncoding }
        set { mutableFields.acceptEncoding = newValue }
    }
    /// `te`, when sent (gRPC expects `trailers` but we do not require it).
    public var te: String? {
        get { fields.te }
        set { mutableFields.te = newValue }
    }
    /// Custom metadata, `-bin` values decoded; includes `authorization` and `user-agent`.
    public var metadata: GRPCMetadata {
        get { fields.metadata }
        set { mutableFields.metadata = newValue }
    }

    init(streamID: Int32, path: String, authority: String?, contentType: String, timeoutNanoseconds: UInt64?,
         messageEncoding: String?, acceptEncoding: String?, te: String?, metadata: GRPCMetadata) {
        self.streamID = streamID
        self.timeoutNanoseconds = timeoutNanoseconds
        fields = Fields(path: path, contentType: contentType, metadata: metadata)
        fields.authority = authority
        fields.messageEncoding = messageEncoding
        fields.acceptEncoding = acceptEncoding
        fields.te = te
    }

    /// The `authorization` value, e.g. `Bearer …`.
    public var authorization: String? { metadata.text("authorization") }

    /// Whether messages may be compressed (a `grpc-encoding` other than identity).
    public var isCompressed: Bool { messageEncoding.map { $0 != "identity" } ?? false }

    public static func == (lhs: GRPCRequestHead, rhs: GRPCRequestHead) -> Bool {
        lhs.streamID == rhs.streamID && lhs.timeoutNanoseconds == rhs.timeoutNanoseconds
            && (lhs.fields === rhs.fields || lhs.fields.values == rhs.fields.values)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(streamID)
        hasher.combine(timeoutNanoseconds)
        hasher.combine(fields.values)
    }

    /// The box, copied first when another head shares it.
    private var mutableFields: Fields {
        mutating get {
            if !isKnownUniquelyReferenced(&fields) { fields = fields.copy() }
            return fields
        }
    }

    /// The text fields. Mutated only through `mutableFields`, i.e. while no other head holds
    /// it, so sharing it between threads (heads are Sendable) never races.
    private final class Fields: @unchecked Sendable {
        var path: String
        var authority: String?
        var contentType: String
        var messageEncoding: String?
        var acceptEncoding: String?
        var te: String?
        var metadata: GRPCMetadata

        init(path: String, contentType: String, metadata: GRPCMetadata) {
            self.path = path
            self.contentType = contentType
            self.metadata = metadata
        }

        func copy() -> Fields {
            let copy = Fields(path: path, contentType: contentType, metadata: metadata)
            copy.authority = authority
            copy.messageEncoding = messageEncoding
            copy.acceptEncoding = acceptEncoding
            copy.te = te
            return copy
        }

        /// Everything, for equality and hashing.
        struct Values: Hashable {
            var path: String
            var authority: String?
            var contentType: String
            var messageEncoding: String?
            var acceptEncoding: String?
            var te: String?
            var metadata: GRPCMetadata
        }

        var values: Values {
            Values(path: path, authority: authority, contentType: contentType, messageEncoding: messageEncoding,
                   acceptEncoding: acceptEncoding, te: te, metadata: metadata)
        }
    }
}

/// A request the session answers itself, without the call core.
struct GRPCRequestRejection: Error, Equatable {
    /// The `:status` of the answer; 200 for a gRPC-level error.
    var httpStatus: Int
    var error: RPCError
    var extraHeaders: [HTTP2HeaderField] = []
}

extension GRPCRequestHead {
    /// The values nearly every request carries, as Strings made once.
    private static let applicationGRPC = "application/grpc"
    private static let applicationGRPCProto = "application/grpc+proto"
    private static let trailers = "trailers"

    /// Parses a request's header fields (pseudo-headers first, as nghttp2 has checked), comparing
    /// names as bytes; values become Strings through `strings`, so those a connection repeats
    /// (the path, the authority) are not made again for every call.
    static func parse(streamID: Int32, fields: HTTP2HeaderBlock.Fields,
                      strings: inout HTTP2StringCache) -> Result<GRPCRequestHead, GRPCRequestRejection> {
        var method: UnsafeRawBufferPointer?
        var path: UnsafeRawBufferPointer?
        var authority: UnsafeRawBufferPointer?
        var contentType: UnsafeRawBufferPointer?
        var te: String?
        var messageEncoding: String?
        var acceptEncoding: String?
        var timeoutNanoseconds: UInt64?
        var metadata = GRPCMetadata()
        for (name, value) in fields {
            guard let first = name.first else { continue }
            if first == UInt8(ascii: ":") {
                if name.equals(":method") { method = value }
                else if name.equals(":path") { path = value }
                else if name.equals(":authority") { authority = value }
                continue  // :scheme, and any other pseudo-header nghttp2 let through
            }
            if name.equals("content-type") {
                contentType = value
            } else if name.equals("te") {
                te = value.equals("trailers") ? trailers : strings.string(value)
            } else if name.equals("grpc-encoding") {
                messageEncoding = strings.string(value)
            } else if name.equals("grpc-accept-encoding") {
                acceptEncoding = strings.string(value)
            } else if name.equals("grpc-timeout") {
                guard let timeout = GRPCTimeout.nanoseconds(value) else {
                    let shown = String(decoding: value.prefix(32), as: UTF8.self)
                    return .failure(.init(httpStatus: 200, error: .init(.invalidArgument,
                        "grpc-timeout \"\(shown)\" is malformed: expected 1 to 8 digits and a unit H, M, S, m, u or n")))
                }
                timeoutNanoseconds = timeout
            } else if name.equals("content-length") {
                continue
            } else if name.count >= 4, name.suffix(4).elementsEqual("-bin".utf8) {
                let key = strings.string(name)
                guard let bytes = GRPCBase64.decode(value) else {
                    return .failure(.init(httpStatus: 200, error: .init(.invalidArgument,
                        "metadata \"\(key)\" is not valid base64 (a -bin key carries base64, padded or not)")))
                }
                metadata.append(lowercase: key, isLowercase: !name.contains(where: isUppercase), .binary(bytes))
            } else {
                // The user agent repeats on every call of a connection; other values may not.
                let text = name.equals("user-agent") ? strings.string(value) : String(decoding: value, as: UTF8.self)
                metadata.append(lowercase: strings.string(name), isLowercase: !name.contains(where: isUppercase), .text(text))
            }
        }
        guard let method, method.equals("POST") else {
            let shown = method.map { String(decoding: $0, as: UTF8.self) } ?? "(none)"
            return .failure(.init(httpStatus: 405, error: .init(.unimplemented,
                "HTTP method \(shown) is not POST: gRPC calls are POST requests")))
        }
        let contentTypeText: String? = contentType.map { value in
            if value.equals("application/grpc") { return applicationGRPC }
            if value.equals("application/grpc+proto") { return applicationGRPCProto }
            return String(decoding: value, as: UTF8.self)
        }
        guard let contentTypeText, isGRPCMediaType(contentTypeText) else {
            return .failure(.init(httpStatus: 415, error: .init(.invalidArgument,
                "content-type \(contentTypeText.map { "\"\($0)\"" } ?? "(none)") is not application/grpc or application/grpc+proto")))
        }
        guard let path, path.first == UInt8(ascii: "/") else {
            return .failure(.init(httpStatus: 200, error: .init(.unimplemented, "the request has no :path naming a method")))
        }
        return .success(GRPCRequestHead(
            streamID: streamID, path: strings.string(path), authority: authority.map { strings.string($0) },
            contentType: contentTypeText, timeoutNanoseconds: timeoutNanoseconds, messageEncoding: messageEncoding,
            acceptEncoding: acceptEncoding, te: te, metadata: metadata))
    }

    private static func isUppercase(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
}

extension GRPCRequestHead {
    /// Whether a content-type names gRPC's media type (parameters, case and spaces aside); the
    /// exact forms every client sends are checked first, without allocating.
    static func isGRPCMediaType(_ contentType: String) -> Bool {
        if contentType == "application/grpc" || contentType == "application/grpc+proto" { return true }
        let mediaType = (contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? "").trimmingSpaces
            .lowercased()
        return mediaType == "application/grpc" || mediaType == "application/grpc+proto"
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " || scalars.first == "\t" { scalars.removeFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
