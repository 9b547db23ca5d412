import LarderWire

/// Decodes the input as a `RequestEnvelope` (and as a `ResponseEnvelope`);
/// whatever decodes must re-encode to bytes that decode to the same value.
enum EnvelopeFuzzer {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        if let request = try? ProtoCodec.decode(RequestEnvelope.self, from: data) {
            try roundTrip(request)
            if request.metadata.keys.contains(where: { $0 != $0.lowercased() }) {
                throw FuzzFailure("metadata key not lower-cased")
            }
        }
        if let response = try? ProtoCodec.decode(ResponseEnvelope.self, from: data) {
            try roundTrip(response)
        }
    }

    static func roundTrip<M: ProtoMessage & Equatable>(_ value: M) throws(FuzzFailure) {
        let again: M
        do {
            again = try ProtoCodec.decode(M.self, from: ProtoCodec.encode(value))
        } catch {
            throw FuzzFailure("\(M.protoName) decoded but its re-encoding does not: \(error)")
        }
        guard again == value else { throw FuzzFailure("\(M.protoName) changed in a round trip: \(value) -> \(again)") }
    }
}
