import LarderWire

/// What the HEADERS of a gRPC request say, parsed and checked.
public struct GRPCRequestHead: Hashable, Sendable {
    /// The HTTP/2 stream that carries the call.
    public var streamID: Int32
    /// `:path`, e.g. `/larder.v1.Items/GetItem`: routes to the method.
    public var path: String
    /// `:authority`, when sent.
    public var authority: String?
    /// `content-type`: `application/grpc` or `application/grpc+proto`.
    public var contentType: String
    /// `grpc-timeout` in nanoseconds (saturated), nil when absent.
    public var timeoutNanoseconds: UInt64?
    /// `grpc-encoding` of the request messages; nil or "identity" when uncompressed.
    public var messageEncoding: String?
    /// `grpc-accept-encoding`, as sent.
    public var acceptEncoding: String?
    /// `te`, when sent (gRPC expects `trailers` but we do not require it).
    public var te: String?
    /// Custom metadata, `-bin` values decoded; includes `authorization` and `user-agent`.
    public var metadata: GRPCMetadata

    /// The `authorization` value, e.g. `Bearer …`.
    public var authorization: String? { metadata.text("authorization") }

    /// Whether messages may be compressed (a `grpc-encoding` other than identity).
    public var isCompressed: Bool { messageEncoding.map { $0 != "identity" } ?? false }
}

/// A request the session answers itself, without the call core.
struct GRPCRequestRejection: Error, Equatable {
    /// The `:status` of the answer; 200 for a gRPC-level error.
    var httpStatus: Int
    var error: RPCError
    var extraHeaders: [HTTP2HeaderField] = []
}

extension GRPCRequestHead {
    /// Header names that are not custom metadata.
    static let reserved: Set<String> = [
        "content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding", "content-length",
    ]

    /// Parses a request's header fields (pseudo-headers first, as nghttp2 has checked).
    static func parse(streamID: Int32, fields: [HTTP2HeaderField]) -> Result<GRPCRequestHead, GRPCRequestRejection> {
        var method: String?
        var path: String?
        var authority: String?
        var contentType: String?
        var head = GRPCRequestHead(streamID: streamID, path: "", contentType: "", metadata: [])
        for field in fields {
            let name = String(decoding: field.name, as: UTF8.self)
            switch name {
            case ":method": method = String(decoding: field.value, as: UTF8.self)
            case ":path": path = String(decoding: field.value, as: UTF8.self)
            case ":authority": authority = String(decoding: field.value, as: UTF8.self)
            case "content-type": contentType = String(decoding: field.value, as: UTF8.self)
            case "te": head.te = String(decoding: field.value, as: UTF8.self)
            case "grpc-encoding": head.messageEncoding = String(decoding: field.value, as: UTF8.self)
            case "grpc-accept-encoding": head.acceptEncoding = String(decoding: field.value, as: UTF8.self)
            case "grpc-timeout":
                guard let timeout = GRPCTimeout.nanoseconds(field.value) else {
                    let shown = String(decoding: field.value.prefix(32), as: UTF8.self)
                    return .failure(.init(httpStatus: 200, error: .init(.invalidArgument,
                        "grpc-timeout \"\(shown)\" is malformed: expected 1 to 8 digits and a unit H, M, S, m, u or n")))
                }
                head.timeoutNanoseconds = timeout
            default:
                if name.hasPrefix(":") || reserved.contains(name) { continue }
                if name.hasSuffix("-bin") {
                    guard let bytes = GRPCBase64.decode(field.value) else {
                        return .failure(.init(httpStatus: 200, error: .init(.invalidArgument,
                            "metadata \"\(name)\" is not valid base64 (a -bin key carries base64, padded or not)")))
                    }
                    head.metadata.append(name, .binary(bytes))
                } else {
                    head.metadata.append(name, .text(String(decoding: field.value, as: UTF8.self)))
                }
            }
        }
        guard method == "POST" else {
            return .failure(.init(httpStatus: 405, error: .init(.unimplemented,
                "HTTP method \(method ?? "(none)") is not POST: gRPC calls are POST requests")))
        }
        guard let contentType, isGRPCMediaType(contentType) else {
            return .failure(.init(httpStatus: 415, error: .init(.invalidArgument,
                "content-type \(contentType.map { "\"\($0)\"" } ?? "(none)") is not application/grpc or application/grpc+proto")))
        }
        guard let path, path.hasPrefix("/") else {
            return .failure(.init(httpStatus: 200, error: .init(.unimplemented, "the request has no :path naming a method")))
        }
        head.path = path
        head.authority = authority
        head.contentType = contentType
        return .success(head)
    }
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
