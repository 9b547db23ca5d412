#if canImport(Glibc)
import Glibc
#endif
import LarderWire

/// The HEADERS of the one request being received, parsed field by field as nghttp2 decodes
/// them (pseudo-headers first, as it has checked), so no field is copied on the way: names are
/// compared as the borrowed bytes, and values become Strings through the session's
/// `HTTP2StringCache`, so those a connection repeats (the path, the authority) are not made
/// again for every call. HTTP/2 forbids interleaving header blocks (RFC 9113 §6.10), so a
/// session needs one parser.
struct GRPCRequestHeadParser {
    /// The stream whose block this is; 0 for none.
    private(set) var streamID: Int32 = 0
    private var method: Method = .absent
    private var path: String?
    private var pathIsAbsolute = false
    private var authority: String?
    private var contentType: String?
    private var te: String?
    private var messageEncoding: String?
    private var acceptEncoding: String?
    private var timeoutNanoseconds: UInt64?
    private var metadata = GRPCMetadata()
    /// The first field that made the request one the session answers itself; later fields
    /// but `content-type` are not looked at (a request that is no gRPC call is answered 405 or
    /// 415 before any gRPC-level error, as gRPC's PROTOCOL-HTTP2.md asks).
    private var rejection: GRPCRequestRejection?
    /// True once the block grew over the session's header list limit (`discard`): the fields
    /// that follow are ignored.
    private var discarded = false

    private enum Method {
        case absent
        case post
        case other(String)
    }

    /// The values nearly every request carries, as Strings made once.
    private static let applicationGRPC = "application/grpc"
    private static let applicationGRPCProto = "application/grpc+proto"
    private static let trailers = "trailers"

    /// Starts the block of `streamID`, forgetting the previous one.
    mutating func begin(streamID: Int32) {
        self = GRPCRequestHeadParser()
        self.streamID = streamID
    }

    /// Ends the block without resetting the rest (`begin` does that before the next one, and
    /// every block, trailers and discarded ones included, starts with it): no field of another
    /// stream is taken. A block `finish` rejected keeps its fields (at most the 8 KiB header
    /// list) until the connection's next HEADERS.
    mutating func end() {
        streamID = 0
    }

    /// Drops what the block said so far and ignores the rest (it is over its size limit).
    mutating func discard() {
        begin(streamID: streamID)
        discarded = true
    }

    /// Takes one field of the block.
    mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, strings: inout HTTP2StringCache) {
        guard !discarded, let first = name.first else { return }
        if first == UInt8(ascii: ":") {
            if name.equals(":method") {
                method = value.equals("POST") ? .post : .other(String(decoding: value, as: UTF8.self))
            } else if name.equals(":path") {
                pathIsAbsolute = value.first == UInt8(ascii: "/")
                path = pathIsAbsolute ? strings.string(value) : nil
            } else if name.equals(":authority") {
                authority = strings.string(value)
            }
            return  // :scheme, and any other pseudo-header nghttp2 let through
        }
        if name.equals("content-type") {
            contentType = if value.equals("application/grpc") { Self.applicationGRPC }
                else if value.equals("application/grpc+proto") { Self.applicationGRPCProto }
                else { String(decoding: value, as: UTF8.self) }
            return
        }
        // Not `rejection == nil`: that resolves to Equatable's == on the optional and copies it.
        if case .some = rejection { return }
        if name.equals("te") {
            te = value.equals("trailers") ? Self.trailers : strings.string(value)
        } else if name.equals("grpc-encoding") {
            messageEncoding = strings.string(value)
        } else if name.equals("grpc-accept-encoding") {
            acceptEncoding = strings.string(value)
        } else if name.equals("grpc-timeout") {
            guard let timeout = GRPCTimeout.nanoseconds(value) else {
                let shown = SafeText.quoted(String(decoding: value, as: UTF8.self))
                reject(RPCError(.invalidArgument,
                    "grpc-timeout \(shown) is malformed: expected 1 to \(GRPCTimeout.maxDigits) digits and a unit H, M, S, m, u or n"))
                return
            }
            timeoutNanoseconds = timeout
        } else if name.equals("content-length") {
            return
        } else if name.count >= 4, name.suffix(4).elementsEqual("-bin".utf8) {
            let key = strings.string(name)
            guard let bytes = Base64.decode(value, rules: .grpcBinaryMetadata) else {
                reject(RPCError(.invalidArgument,
                    "metadata \(SafeText.quoted(key)) is not valid base64 (a -bin key carries base64, padded or not)"))
                return
            }
            appendMetadata(key, isLowercase: !name.contains(where: Self.isUppercase), .binary(bytes))
        } else {
            // The user agent repeats on every call of a connection; other values may not.
            let text = name.equals("user-agent") ? strings.string(value) : String(decoding: value, as: UTF8.self)
            appendMetadata(strings.string(name), isLowercase: !name.contains(where: Self.isUppercase), .text(text))
        }
    }

    /// The request the block made, or why the session answers it itself. Moves what the block
    /// said out of the parser: `begin` it again before the next block.
    /// Checked in this order: the HTTP method (405, with `allow: POST`), the content-type
    /// (415), a field the parser rejected (a malformed `grpc-timeout` or `-bin` value), `:path`.
    mutating func finish() -> Result<GRPCRequestHead, GRPCRequestRejection> {
        let path = pathIsAbsolute ? self.path.take() : nil
        switch method {
        case .post:
            break
        case .absent, .other:
            let shown = if case .other(let name) = method { SafeText.unquoted(name) } else { "(none)" }
            return .failure(.init(path: path, httpStatus: 405, error: .init(.unimplemented,
                "HTTP method \(shown) is not POST: gRPC calls are POST requests"), extraHeaders: [Self.allowPOST]))
        }
        let sentContentType = contentType.take()
        guard let contentType = sentContentType, GRPCRequestHead.isGRPCMediaType(contentType) else {
            return .failure(.init(path: path, httpStatus: 415, error: .init(.invalidArgument,
                "content-type \(sentContentType.map { SafeText.quoted($0) } ?? "(none)") is not application/grpc or application/grpc+proto")))
        }
        if var rejection = rejection.take() {
            rejection.path = path
            return .failure(rejection)
        }
        guard let path else {
            return .failure(.init(httpStatus: 200, error: .init(.unimplemented, "the request has no :path naming a method")))
        }
        var metadata = GRPCMetadata()
        swap(&metadata, &self.metadata)
        return .success(GRPCRequestHead(
            streamID: streamID, path: path, authority: authority.take(), contentType: contentType,
            timeoutNanoseconds: timeoutNanoseconds, messageEncoding: messageEncoding.take(),
            acceptEncoding: acceptEncoding.take(), te: te.take(), metadata: metadata))
    }

    private mutating func reject(_ error: RPCError) {
        rejection = GRPCRequestRejection(httpStatus: 200, error: error)
    }

    /// What a 405 answer must carry (RFC 9110 §15.5.6).
    private static let allowPOST = HTTP2HeaderField("allow", "POST")

    private mutating func appendMetadata(_ name: String, isLowercase: Bool, _ value: GRPCMetadata.Value) {
        if metadata.entries.capacity == 0 { metadata.entries.reserveCapacity(4) }
        metadata.append(lowercase: name, isLowercase: isLowercase, value)
    }

    private static func isUppercase(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `text`'s UTF-8.
    func equals(_ text: StaticString) -> Bool {
        guard count == text.utf8CodeUnitCount else { return false }
        guard count > 0, let baseAddress else { return true }
        return memcmp(baseAddress, text.utf8Start, count) == 0
    }

    /// Whether both hold the same bytes.
    func sameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let baseAddress, let otherBase = other.baseAddress else { return true }
        return memcmp(baseAddress, otherBase, count) == 0
    }
}

extension Base64.Rules {
    /// `-bin` metadata: standard alphabet; gRPC senders emit it unpadded, and receivers accept both forms.
    static let grpcBinaryMetadata = Base64.Rules(standard: true, urlSafe: false, padding: true, canonical: true)
}
