import CLarderProto
import CProtobufC
import LarderAPI
import LarderWire
import Testing

/// Proto/ and the Swift types cannot drift apart: every message type compiled
/// into CLarderProto has a Swift type, and a C message with every field set
/// (built from the descriptor alone) survives a trip through that Swift type
/// field for field and byte for byte. A field added to proto/ and to the C
/// without regenerating the Swift fails here.
@Suite("Generated Swift types match proto/")
struct GeneratedDriftTests {
    /// The Swift type of every message type: the generated ones, plus the hand-written
    /// well-known types and the envelopes (LarderWire keeps those on the framing path).
    static let swiftTypes: [any (ProtoMessage & Hashable).Type] =
        APIMessages.all + [Timestamp.self, FieldMask.self, Empty.self, RequestEnvelope.self, ResponseEnvelope.self]

    static var compiledMessages: [UnsafePointer<ProtobufCMessageDescriptor>] {
        var count: UInt = 0
        let all = larder_proto_all_message_descriptors(&count)
        return (0..<Int(count)).map { all[$0] }.filter { !DescriptorSample.isMapEntry($0) }
    }

    @Test("every compiled message type has a Swift type")
    func everyTypeHasASwiftType() {
        let covered = Set(Self.swiftTypes.map { $0.descriptor.name })
        let compiled = Self.compiledMessages.map { String(cString: $0.pointee.name) }
        let missing = compiled.filter { !covered.contains($0) }
        #expect(missing.isEmpty, "no Swift type for \(missing); run scripts/gen-proto.sh")
        #expect(compiled.count == Self.swiftTypes.count, "a Swift type for a message that is not compiled, or listed twice")
    }

    @Test("a message with every field set survives Swift unchanged", arguments: swiftTypes.indices)
    func everyFieldSurvives(index: Int) throws {
        try Self.roundTrip(Self.swiftTypes[index])
    }

    static func roundTrip<M: ProtoMessage & Hashable>(_ type: M.Type) throws {
        let descriptor = M.descriptor.pointer
        let oneofVariants = DescriptorSample.fields(of: descriptor).map(\.pointee).reduce(into: [UInt32: Int]()) {
            if $1.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0 { $0[$1.quantifier_offset, default: 0] += 1 }
        }.values.max() ?? 1
        for variant in 0..<oneofVariants {
            let original = DescriptorSample.make(descriptor, variant: variant)
            defer { protobuf_c_message_free_unpacked(original, nil) }
            let bytes = ProtoCodec.pack(original)

            // C struct -> Swift value -> C struct.
            let value = try M(unpacked: UnpackedMessage(original))
            if descriptor.pointee.n_fields > 0 {
                let empty = try ProtoCodec.decode(M.self, from: [])
                #expect(value != empty, "\(M.protoName): a sample with every field set equals the default value")
            }
            let arena = CArena()
            let rebuilt = value.build(in: arena)
            let differences = DescriptorSample.differences(UnsafeRawPointer(original), UnsafeRawPointer(rebuilt.pointer), descriptor)
            #expect(differences.isEmpty, "\(M.protoName) variant \(variant) lost fields in Swift: \(differences)")
            #expect(ProtoCodec.pack(rebuilt) == bytes, "\(M.protoName) variant \(variant): the Swift re-encoding differs")

            // Bytes -> Swift value -> bytes, the path the server and the client take.
            let decoded = try ProtoCodec.decode(M.self, from: bytes)
            #expect(decoded == value, "\(M.protoName) variant \(variant)")
            #expect(ProtoCodec.encode(decoded) == bytes, "\(M.protoName) variant \(variant)")
        }
    }
}
