/// The protocol the load is sent over (`--protocol`); both reach the same port.
public enum BenchTransport: String, Sendable, CaseIterable {
    /// Larder's own framing (docs/PROTOCOL.md): the default.
    case lean
    /// Standard gRPC over HTTP/2 cleartext (h2c), one stream per call.
    case grpc

    /// How reports name it.
    var label: String { self == .lean ? "the lean protocol" : "gRPC over HTTP/2" }
}
