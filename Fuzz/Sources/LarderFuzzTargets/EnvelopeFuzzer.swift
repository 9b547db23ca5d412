import LarderWire

/// Decodes the input as a `RequestEnvelope` (and as a `ResponseEnvelope`);
/// whatever decodes must re-encode to bytes that decode to the same value.
/// The server's `DecodeLimits` are checked as the server does: a refusal is
/// RESOURCE_EXHAUSTED, and what they let through decodes as without them.
enum EnvelopeFuzzer {
    static func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        try checkLimits(data)
        if let request = try? ProtoCodec.decode(RequestEnvelope.self, from: data) {
            try roundTrip(request)
            if DecodeLimitScan.envelopeSummary(data).callID != request.callID {
                throw FuzzFailure("envelopeSummary read call id \(DecodeLimitScan.envelopeSummary(data).callID), "
                                  + "the envelope has \(request.callID)")
            }
            if request.metadata.keys.contains(where: { $0 != $0.lowercased() }) {
                throw FuzzFailure("metadata key not lower-cased")
            }
        }
        if let response = try? ProtoCodec.decode(ResponseEnvelope.self, from: data) {
            try roundTrip(response)
        }
    }

    /// Decoding in an arena with the server's limits either refuses with RESOURCE_EXHAUSTED
    /// or gives what decoding without limits gives.
    static func checkLimits(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let arena = UnpackArena(blockSize: 1024, limits: .server)
        let limited: Result<RequestEnvelope, RPCError>
        do throws(RPCError) { limited = .success(try arena.decode(RequestEnvelope.self, from: data)) } catch {
            limited = .failure(error)
        }
        let unlimited = try? ProtoCodec.decode(RequestEnvelope.self, from: data)
        switch limited {
        case .success(let envelope):
            guard envelope == unlimited else { throw FuzzFailure("the limited decode differs from the unlimited one") }
        case .failure(let error) where error.code == .resourceExhausted:
            if error.message.isEmpty { throw FuzzFailure("RESOURCE_EXHAUSTED without a message") }
        case .failure(let error):
            if unlimited != nil { throw FuzzFailure("only the limited decode failed: \(error)") }
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
