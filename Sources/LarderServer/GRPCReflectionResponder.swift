import LarderAPI
import LarderWire

/// Answers the standard gRPC server reflection service (`grpc.reflection.v1` and
/// `grpc.reflection.v1alpha`: the same messages on the wire, so one responder serves
/// both) from the file descriptors generated from proto/ (`APIFileDescriptors`).
///
/// One responder per reflection stream: like grpc-go's, it sends each file with the
/// files it imports, leaving out those already sent on the same stream, so a client
/// that walks a service's types receives every file once.
struct GRPCReflectionResponder: Sendable {
    typealias Request = GrpcReflectionV1ServerReflectionRequest
    typealias Response = GrpcReflectionV1ServerReflectionResponse

    /// The names of the services the server serves, sorted (what `list_services` answers).
    let services: [String]
    /// Files sent on this stream so far.
    private(set) var sent: Set<String> = []

    init(services: [String]) {
        self.services = services.sorted()
    }

    /// The reply to one request of the stream.
    mutating func answer(_ request: Request) -> Response {
        var response = Response(validHost: request.host, originalRequest: request)
        switch request.messageRequest {
        case .fileByFilename(let name):
            response.messageResponse = files(startingAt: name, missing: "file \(SafeText.quoted(name)) is not known to this server")
        case .fileContainingSymbol(let symbol):
            let file = APIFileDescriptors.fileBySymbol[Self.trimmed(symbol)]
            response.messageResponse = files(startingAt: file, missing: "symbol \(SafeText.quoted(symbol)) is not defined by any "
                + "file this server knows (give a full name such as larder.v1.LocationService)")
        case .fileContainingExtension(let request):
            response.messageResponse = Self.error(.notFound, "no extension \(request.extensionNumber) of "
                + "\(SafeText.quoted(request.containingType)): proto/ defines no extensions")
        case .allExtensionNumbersOfType(let type):
            let name = Self.trimmed(type)
            if APIFileDescriptors.fileBySymbol[name] != nil {
                response.messageResponse = .allExtensionNumbersResponse(
                    GrpcReflectionV1ExtensionNumberResponse(baseTypeName: name, extensionNumber: []))
            } else {
                response.messageResponse = Self.error(.notFound, "type \(SafeText.quoted(type)) is not known to this server")
            }
        case .listServices:
            response.messageResponse = .listServicesResponse(GrpcReflectionV1ListServiceResponse(
                service: services.map { GrpcReflectionV1ServiceResponse(name: $0) }))
        case nil:
            response.messageResponse = Self.error(.invalidArgument, "the request names no message_request: set "
                + "file_by_filename, file_containing_symbol, file_containing_extension, "
                + "all_extension_numbers_of_type or list_services")
        }
        return response
    }

    /// `name` and every file it imports, transitively, except the files already sent.
    private mutating func files(startingAt name: String?, missing: String) -> Response.OneOf_MessageResponse {
        guard let name, APIFileDescriptors.files[name] != nil else { return Self.error(.notFound, missing) }
        var encoded = EncodedMessages()
        var pending = [name]
        var queued: Set<String> = [name]
        while let next = pending.popLast() {
            guard let file = APIFileDescriptors.files[next] else { continue }
            // The requested file always, even when sent before: the client asked for it.
            if next == name || !sent.contains(next) {
                encoded.append(file.serialized)
                sent.insert(next)
            }
            for dependency in file.dependencies where queued.insert(dependency).inserted {
                pending.append(dependency)
            }
        }
        return .fileDescriptorResponse(GrpcReflectionV1FileDescriptorResponse(fileDescriptorProto: encoded))
    }

    /// Symbols may come with the leading dot of a proto type reference.
    private static func trimmed(_ symbol: String) -> String {
        symbol.hasPrefix(".") ? String(symbol.dropFirst()) : symbol
    }

    private static func error(_ code: StatusCode, _ message: String) -> Response.OneOf_MessageResponse {
        .errorResponse(GrpcReflectionV1ErrorResponse(errorCode: code.rawValue, errorMessage: message))
    }
}
