import LarderAPI
import LarderWire
import Testing

@Suite("Envelopes")
struct EnvelopeTests {
    @Test("a request envelope round trips with metadata, payload and timeout")
    func requestRoundTrip() throws {
        let payload = ProtoCodec.encode(GetLocationRequest(id: "棚"))
        let request = RequestEnvelope(callID: UInt64.max, method: LocationMethods.getLocation.path, payload: payload,
                                      timeoutMilliseconds: 2500,
                                      metadata: ["authorization": "Bearer tökén", "x-trace": "a=1;b=2"])
        let decoded = try ProtoCodec.decode(RequestEnvelope.self, from: ProtoCodec.encode(request))
        #expect(decoded == request)
        #expect(try ProtoCodec.decode(GetLocationRequest.self, from: decoded.payload).id == "棚")
    }

    @Test("metadata keys read lower case")
    func metadataKeysLowercased() throws {
        let request = RequestEnvelope(callID: 1, method: "/m", payload: [], metadata: ["Authorization": "t"])
        let decoded = try ProtoCodec.decode(RequestEnvelope.self, from: ProtoCodec.encode(request))
        #expect(decoded.metadata == ["authorization": "t"])
    }

    @Test("a metadata key sent twice (after lower-casing) keeps its last value")
    func duplicateMetadataKeysLastWins() throws {
        func entry(_ key: String, _ value: String) -> [UInt8] {
            let body = [0x0A, UInt8(key.utf8.count)] + Array(key.utf8) + [0x12, UInt8(value.utf8.count)] + Array(value.utf8)
            return [0x2A, UInt8(body.count)] + body
        }
        let bytes: [UInt8] = [0x08, 0x01] + entry("Authorization", "first") + entry("x-a", "1")
            + entry("authorization", "last") + entry("X-A", "2")
        let decoded = try ProtoCodec.decode(RequestEnvelope.self, from: bytes)
        #expect(decoded.metadata == ["authorization": "last", "x-a": "2"])
    }

    @Test("a request envelope with defaults round trips")
    func requestDefaults() throws {
        let request = RequestEnvelope(callID: 7, method: "/larder.v1.LocationService/ListLocations", payload: [])
        let decoded = try ProtoCodec.decode(RequestEnvelope.self, from: ProtoCodec.encode(request))
        #expect(decoded == request)
        #expect(decoded.metadata.isEmpty)
        #expect(decoded.timeoutMilliseconds == 0)
    }

    @Test("response envelopes round trip", arguments: [
        ResponseEnvelope(callID: 1, payload: [0x0A, 0x02, 0x68, 0x69]),
        ResponseEnvelope(callID: 2, error: RPCError.notFound("meal record \"abc\" not found")),
        ResponseEnvelope(callID: 0, statusCode: .unavailable, statusMessage: "server shutting down"),
        ResponseEnvelope(callID: 3, statusCode: StatusCode(rawValue: 99), statusMessage: "from the future"),
    ])
    func responseRoundTrip(response: ResponseEnvelope) throws {
        let decoded = try ProtoCodec.decode(ResponseEnvelope.self, from: ProtoCodec.encode(response))
        #expect(decoded == response)
        #expect(decoded.error == response.error)
    }

    @Test("a response carries its error")
    func responseError() {
        let error = RPCError.invalidArgument("meal_record.calories must be 0-100000, got -5")
        let response = ResponseEnvelope(callID: 9, error: error)
        #expect(response.error == error)
        #expect(response.payload.isEmpty)
        #expect(ResponseEnvelope(callID: 9, payload: [1]).error == nil)
    }

    @Test("a framed envelope comes back out of a FrameDecoder")
    func framed() throws {
        let request = RequestEnvelope(callID: 42, method: HealthMethods.check.path,
                                      payload: ProtoCodec.encode(HealthCheckRequest()))
        var decoder = FrameDecoder()
        decoder.append(Frame.encode(request))
        let body = try #require(try decoder.next())
        #expect(try ProtoCodec.decode(RequestEnvelope.self, from: body) == request)
    }

    @Test("invalid UTF-8 in the method name is INVALID_ARGUMENT")
    func invalidMethodName() throws {
        var bytes = ProtoCodec.encode(RequestEnvelope(callID: 1, method: "/abc", payload: []))
        let index = try #require(bytes.firstIndex(of: UInt8(ascii: "b")))
        bytes[index] = 0xFF
        let error = #expect(throws: RPCError.self) { try ProtoCodec.decode(RequestEnvelope.self, from: bytes) }
        #expect(error?.code == .invalidArgument)
    }
}
