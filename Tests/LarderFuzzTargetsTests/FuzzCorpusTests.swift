import Foundation
import LarderAPI
@testable import LarderFuzzTargets
import LarderWire
import Testing

/// Runs the committed corpus and every past finding through the fuzz targets
/// without libFuzzer, so a regression fails the normal suite.
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ kind: String, _ target: FuzzTarget) -> [(path: String, bytes: [UInt8])] {
        FuzzCorpus.inputs(at: [fuzzDirectory.appendingPathComponent("\(kind)/\(target.rawValue)").path])
    }

    @Test("every corpus and regression input passes its target", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) {
        let inputs = Self.inputs("corpus", target) + Self.inputs("regressions", target)
        #expect(inputs.count >= FuzzSeeds.seeds(for: target).count)
        for (path, bytes) in inputs {
            #expect(throws: Never.self, "\(path)") { try target.run(bytes) }
        }
    }

    @Test("the committed seed corpus is what FuzzSeeds generates", arguments: FuzzTarget.allCases)
    func seedsCommitted(_ target: FuzzTarget) {
        let committed = Dictionary(Self.inputs("corpus", target).map {
            (URL(fileURLWithPath: $0.path).lastPathComponent, $0.bytes)
        }, uniquingKeysWith: { first, _ in first })
        for seed in FuzzSeeds.seeds(for: target) {
            #expect(committed[seed.name] == seed.bytes,
                    "Fuzz/corpus/\(target.rawValue)/\(seed.name) is stale: run scripts/fuzz.sh --write-seeds")
        }
    }

    @Test("the payload target covers every method the server serves, once")
    func payloadMethodsComplete() {
        let served = APIServices.all.flatMap { $0.methods.map(\.path) }
        #expect(PayloadMethods.all.map(\.path).sorted() == served.sorted())
    }

    @Test("the frame oracle notices a decoder that loses a frame")
    func frameReferenceParse() {
        // Control for the frame target: the reference parse itself splits and limits correctly.
        let stream = Frame.encode([1, 2, 3]) + Frame.encode([]) + [0, 0, 0, 9, 1]
        let parsed = stream.withUnsafeBytes { FrameFuzzer.reference($0, limit: 16) }
        #expect(parsed.frames == [[1, 2, 3], []])
        #expect(parsed.failure == nil && parsed.leftover == 5)
        let tooLarge = stream.withUnsafeBytes { FrameFuzzer.reference($0, limit: 2) }
        #expect(tooLarge.failure == .frameTooLarge(length: 3, limit: 2) && tooLarge.frames.isEmpty)
    }

    @Test("payload errors other than the client's fault are findings")
    func internalErrorsAreFindings() {
        #expect(throws: FuzzFailure.self) {
            try PayloadMethod.expectClientError(RPCError.internalError("boom"), "test")
        }
        #expect(throws: Never.self) {
            try PayloadMethod.expectClientError(RPCError.invalidArgument("name is required"), "test")
        }
    }
}
