import LarderHTTP2
@testable import LarderServer
import Testing

@Suite struct CallMetadataTests {
    @Test func anHTTP2RequestsLastTextValueOfANameIsTheOneSeen() {
        let metadata = CallMetadata(http2: [
            GRPCMetadata.Entry("authorization", .text("Bearer first")),
            GRPCMetadata.Entry("x-trace-bin", .binary([1, 2, 3])),
            GRPCMetadata.Entry("authorization", .text("Bearer second")),
            GRPCMetadata.Entry("authorization", .binary([9])),
        ])
        #expect(metadata["authorization"] == "Bearer second")
        #expect(metadata["x-trace-bin"] == nil)
        #expect(metadata["user-agent"] == nil)
    }

    @Test func leanMetadataIsLookedUpByName() {
        let metadata = CallMetadata(["authorization": "Bearer t", "x-request-id": "42"])
        #expect(metadata["x-request-id"] == "42")
        #expect(metadata["authorization"] == "Bearer t")
        #expect(metadata["absent"] == nil)
        let empty: CallMetadata = [:]
        #expect(empty["authorization"] == nil)
    }
}
