import LarderAPI
import LarderWire
import Testing

/// protobuf-c unpacks strings into C strings; a NUL byte inside one would cut
/// it short in Swift, so the decoder rejects such strings instead.
@Suite("Strings holding NUL bytes")
struct NULStringTests {
    /// One length-delimited field: tag, length, bytes (lengths under 128 only).
    static func field(_ number: UInt8, _ bytes: [UInt8]) -> [UInt8] {
        precondition(bytes.count < 128)
        return [number << 3 | 2, UInt8(bytes.count)] + bytes
    }

    static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let decode: @Sendable ([UInt8]) throws -> Void
        let field: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "top-level id", bytes: field(1, text("ab") + [0] + text("cd")),
             decode: { _ = try ProtoCodec.decode(GetLocationRequest.self, from: $0) }, field: "id"),
        Case(name: "NUL as the first byte", bytes: field(1, [0] + text("hidden")),
             decode: { _ = try ProtoCodec.decode(DeleteLocationRequest.self, from: $0) }, field: "id"),
        Case(name: "nested name", bytes: field(1, field(2, text("Pantry") + [0] + text("'); DROP TABLE x; --"))),
             decode: { _ = try ProtoCodec.decode(CreateLocationRequest.self, from: $0) }, field: "location.name"),
        Case(name: "repeated update-mask path",
             bytes: field(1, field(1, text("0d6f1c9e-3b7a-4f7e-9a53-8b1f4c2d6e70")))
                + field(2, field(1, text("name")) + field(1, text("name") + [0])),
             decode: { _ = try ProtoCodec.decode(UpdateLocationRequest.self, from: $0) },
             field: "update_mask.paths"),
        Case(name: "envelope method", bytes: field(2, text("/grpc.health.v1.Health/Check") + [0, 0x41]),
             decode: { _ = try ProtoCodec.decode(RequestEnvelope.self, from: $0) }, field: "method"),
        Case(name: "metadata value", bytes: [0x08, 0x01] + field(5, field(1, text("authorization"))
                + field(2, text("Bearer t") + [0] + text("x"))),
             decode: { _ = try ProtoCodec.decode(RequestEnvelope.self, from: $0) }, field: "metadata.value"),
    ]

    @Test("a NUL byte in a string field is INVALID_ARGUMENT naming the field", arguments: cases)
    func rejected(_ testCase: Case) {
        let error = #expect(throws: RPCError.self) { try testCase.decode(testCase.bytes) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "\(testCase.field) must not contain NUL bytes")
    }

    @Test("the same messages without the NUL byte decode")
    func controls() throws {
        let id = try ProtoCodec.decode(GetLocationRequest.self, from: Self.field(1, Self.text("abcd"))).id
        #expect(id == "abcd")
        let create = try ProtoCodec.decode(CreateLocationRequest.self,
                                           from: Self.field(1, Self.field(2, Self.text("Pantry"))))
        #expect(create.location.name == "Pantry")
    }

    @Test("zero bytes outside strings are fine: bytes fields, varints, empty strings")
    func zeroBytesElsewhere() throws {
        let payload: [UInt8] = [0, 0, 0x0A, 0x00, 0]
        let envelope = RequestEnvelope(callID: 1, method: "/m", payload: payload, metadata: ["k": ""])
        let decoded = try ProtoCodec.decode(RequestEnvelope.self, from: ProtoCodec.encode(envelope))
        #expect(decoded == envelope)
        // An explicitly empty string (length 0) next to a zero varint.
        let record = try ProtoCodec.decode(CreateMealRecordRequest.self,
                                           from: Self.field(1, [0x12, 0x00, 0x18, 0x00]))
        #expect(record.mealRecord.name.isEmpty && record.mealRecord.calories == 0)
    }

    @Test("an unknown length-delimited field may hold NUL bytes")
    func unknownFieldIgnored() throws {
        let bytes = Self.field(1, Self.text("abcd")) + Self.field(9, [0x61, 0, 0x62])
        #expect(try ProtoCodec.decode(GetLocationRequest.self, from: bytes).id == "abcd")
    }
}
