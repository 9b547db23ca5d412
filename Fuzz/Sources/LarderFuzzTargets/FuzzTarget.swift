/// The fuzz targets: each takes one input of arbitrary bytes, runs it through
/// the code that reads untrusted bytes, and throws `FuzzFailure` when a
/// property breaks (a crash or a hang is a finding too).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `FrameDecoder` fed the stream in arbitrary pieces, checked against a
    /// one-shot reference parse.
    case frames
    /// `RequestEnvelope` decoding, checked by re-encoding.
    case envelope
    /// Payload decoding of every request type, then its operation against an
    /// in-memory store, checked by re-encoding request and response.
    case payload
    /// A client's byte stream through `GRPCServerSession` with an echo responder, in pieces.
    case http2

    /// Runs one input.
    public func run(_ data: UnsafeRawBufferPointer) throws(FuzzFailure) {
        switch self {
        case .frames: try FrameFuzzer.run(data)
        case .envelope: try EnvelopeFuzzer.run(data)
        case .payload: try PayloadFuzzer.run(data)
        case .http2: try HTTP2Fuzzer.run(data)
        }
    }

    /// Runs one input held in an array.
    public func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(FuzzFailure) in try run(raw) } }
        try result.get()
    }
}
