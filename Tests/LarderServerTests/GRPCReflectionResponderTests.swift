import LarderAPI
import LarderWire
import Testing
@testable import LarderServer

/// The standard reflection service's answers, from the generated file descriptors.
@Suite("gRPC server reflection answers")
struct GRPCReflectionResponderTests {
    typealias Request = GrpcReflectionV1ServerReflectionRequest

    static let served = APIServices.all.map(\.name)

    static func files(_ response: GrpcReflectionV1ServerReflectionResponse) -> [String] {
        guard case .fileDescriptorResponse(let files) = response.messageResponse else { return [] }
        return (0..<files.fileDescriptorProto.count).compactMap { index in
            let serialized = Array(files.fileDescriptorProto[index])
            return APIFileDescriptors.files.values.first { $0.serialized == serialized }?.name
        }
    }

    @Test func listServicesNamesEveryServedService() {
        var responder = GRPCReflectionResponder(services: Self.served)
        let response = responder.answer(Request(host: "h", messageRequest: .listServices("*")))
        guard case .listServicesResponse(let list) = response.messageResponse else {
            Issue.record("not a list_services response: \(response)")
            return
        }
        #expect(list.service.map(\.name) == Self.served.sorted())
        #expect(response.validHost == "h")
        #expect(response.originalRequest.messageRequest == .listServices("*"))
    }

    @Test func aSymbolBringsItsFileAndImportsOnceEachOnAStream() throws {
        var responder = GRPCReflectionResponder(services: Self.served)
        let first = Self.files(responder.answer(Request(messageRequest: .fileContainingSymbol("larder.v1.MealRecordService"))))
        #expect(first.first == "larder/v1/meal_record.proto")
        let expected = try #require(APIFileDescriptors.files["larder/v1/meal_record.proto"]).dependencies
        #expect(Set(first.dropFirst()) == Set(expected), "its imports follow it")
        #expect(Set(first).count == first.count, "each file once")
        // A method, a nested type's file already sent: only the file asked for comes again.
        let again = Self.files(responder.answer(Request(messageRequest:
            .fileContainingSymbol("larder.v1.MealRecordService.ListMealRecords"))))
        #expect(again == ["larder/v1/meal_record.proto"])
        let location = Self.files(responder.answer(Request(messageRequest: .fileByFilename("larder/v1/location.proto"))))
        #expect(location == ["larder/v1/location.proto"], "its imports (well-known types) were sent already")
    }

    /// grpc-go and gRPC C++ resolve a field's full name to its file, and grpcurl's
    /// `describe larder.v1.Location.name` asks for that (audit 26 F3).
    @Test func fieldsAndNestedSymbolsBringTheirFile() {
        for (symbol, file) in [("larder.v1.Location.name", "larder/v1/location.proto"),
                               (".larder.v1.MealRecord.eaten_at", "larder/v1/meal_record.proto"),
                               ("larder.v1.ListMealRecordsRequest.page_token", "larder/v1/meal_record.proto"),
                               ("grpc.health.v1.HealthCheckResponse.status", "grpc/health/v1/health.proto"),
                               ("grpc.health.v1.HealthCheckResponse.SERVING", "grpc/health/v1/health.proto")] {
            var responder = GRPCReflectionResponder(services: Self.served)
            let files = Self.files(responder.answer(Request(messageRequest: .fileContainingSymbol(symbol))))
            #expect(files.first == file, "\(symbol)")
        }
        var responder = GRPCReflectionResponder(services: Self.served)
        guard case .errorResponse = responder.answer(Request(messageRequest:
            .fileContainingSymbol("larder.v1.Location.no_such_field"))).messageResponse else {
            Issue.record("an unknown field was found")
            return
        }
    }

    @Test func unknownNamesAreNotFoundErrorsInTheStream() {
        var responder = GRPCReflectionResponder(services: Self.served)
        for request in [Request(messageRequest: .fileContainingSymbol("no.such.Type")),
                        Request(messageRequest: .fileByFilename("no/such.proto")),
                        Request(messageRequest: .allExtensionNumbersOfType("no.such.Type")),
                        Request(messageRequest: .fileContainingExtension(
                            GrpcReflectionV1ExtensionRequest(containingType: "larder.v1.Location", extensionNumber: 100)))] {
            guard case .errorResponse(let error) = responder.answer(request).messageResponse else {
                Issue.record("\(request): not an error")
                continue
            }
            #expect(error.errorCode == StatusCode.notFound.rawValue && !error.errorMessage.isEmpty)
        }
        guard case .errorResponse(let error) = responder.answer(Request()).messageResponse else {
            Issue.record("an empty request is not an error")
            return
        }
        #expect(error.errorCode == StatusCode.invalidArgument.rawValue)
    }

    @Test func aKnownMessageHasNoExtensions() {
        var responder = GRPCReflectionResponder(services: Self.served)
        let response = responder.answer(Request(messageRequest: .allExtensionNumbersOfType(".larder.v1.Location")))
        #expect(response.messageResponse == .allExtensionNumbersResponse(
            GrpcReflectionV1ExtensionNumberResponse(baseTypeName: "larder.v1.Location", extensionNumber: [])))
    }
}
