import LarderAPI
import LarderWire
import Testing

@Suite("Method tables of streaming and unserved services")
struct StreamingMethodTableTests {
    @Test("the standard reflection services have typed streaming entries, both sides streaming")
    func reflectionStreams() {
        let v1 = GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo
        #expect(v1.path == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
        #expect(v1.isClientStreaming && v1.isServerStreaming)
        #expect(v1.descriptor.input == GrpcReflectionV1ServerReflectionRequest.descriptor)
        #expect(v1.descriptor.output == GrpcReflectionV1ServerReflectionResponse.descriptor)
        let alpha = GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo
        #expect(alpha.path == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        #expect(alpha.isClientStreaming && alpha.isServerStreaming)
        #expect(alpha.descriptor.input == GrpcReflectionV1alphaServerReflectionRequest.descriptor)
        #expect(GrpcReflectionV1alphaServerReflectionRequest.protoName == "grpc.reflection.v1alpha.ServerReflectionRequest")
    }

    @Test("unary entries say they do not stream; health Watch streams responses only")
    func unaryDoesNotStream() {
        #expect(!HealthMethods.check.isClientStreaming && !HealthMethods.check.isServerStreaming)
        #expect(!HealthMethods.watch.isClientStreaming && HealthMethods.watch.isServerStreaming)
        #expect(HealthMethods.watch.path == "/grpc.health.v1.Health/Watch")
        #expect(HealthMethods.watch.descriptor.input == HealthCheckRequest.descriptor)
    }

    @Test("the standard reflection services are served: in APIServices.all, and nothing is unserved")
    func unservedList() {
        #expect(APIServices.unserved.isEmpty)
        let served = Set(APIServices.all.map(\.name))
        #expect(served.isSuperset(of: ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]))
    }
}
