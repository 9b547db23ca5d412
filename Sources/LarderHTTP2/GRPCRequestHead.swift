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
    /// The request's `:path` when it had one (for the metrics and the access log).
    var path: String? = nil
    /// The `:status` of the answer; 200 for a gRPC-level error.
    var httpStatus: Int
    var error: RPCError
    var extraHeaders: [HTTP2HeaderField] = []
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
