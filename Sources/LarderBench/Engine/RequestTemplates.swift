import CLarderProto
import CProtobufC
import LarderHTTP2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Precomputed request envelopes: for each template, a protobuf-c
/// `RequestEnvelope` whose method, payload and metadata point at memory this
/// object owns. A loop copies the envelopes once, then per call only sets
/// `call_id` and packs; no allocation per call.
final class RequestTemplates: @unchecked Sendable {
    // Sendable because it is immutable after init (the vars are filled in init only) and the
    // C memory they point at is only read by the loops, then freed in deinit.
    private var allocations: [UnsafeMutableRawPointer] = []
    private(set) var envelopes: [Larder__Rpc__V1__RequestEnvelope] = []
    /// Which templates belong to which workload.
    let ranges: [Workload: Range<Int>]
    /// Per template: renders its payload for each call (`--call` with placeholders); nil = fixed payload.
    let generators: [PayloadGenerator?]
    /// Per template, for `--protocol grpc`: the request's header fields (method path and metadata)
    /// and its body (the fixed payload as one gRPC message; empty for a generator's template).
    let grpcHeaders: [GRPCRequestHeaderBlock]
    let grpcBodies: [[UInt8]]

    /// Whether a `--call` group's method may create data (not read-only).
    let callCreates: Bool

    /// - Parameters:
    ///   - payloads: per workload, the method path and the encoded request payloads to pick from.
    ///   - metadata: call metadata sent with every call (e.g. authorization).
    ///   - overTLS: the connections are TLS, so gRPC requests say `:scheme https`.
    init(payloads: [RequestCatalog.Group], metadata: [(String, String)], callCreates: Bool = false, overTLS: Bool = false) {
        self.callCreates = callCreates
        var ranges: [Workload: Range<Int>] = [:]
        var envelopes: [Larder__Rpc__V1__RequestEnvelope] = []
        var generators: [PayloadGenerator?] = []
        var grpcHeaders: [GRPCRequestHeaderBlock] = []
        var grpcBodies: [[UInt8]] = []
        let entries = Self.metadataEntries(metadata, allocations: &allocations)
        for group in payloads {
            let method = Self.copy(string: group.method, allocations: &allocations)
            let start = envelopes.count
            let headers = GRPCRequestHeaderBlock(path: group.method, metadata: metadata, overTLS: overTLS)
            for payload in group.payloads {
                grpcHeaders.append(headers)
                grpcBodies.append(group.generator == nil ? GRPCLoadClientSession.body(message: payload) : [])
                var envelope = Larder__Rpc__V1__RequestEnvelope()
                larder__rpc__v1__request_envelope__init(&envelope)
                envelope.method = method
                envelope.payload = Self.copy(bytes: payload, allocations: &allocations)
                envelope.n_metadata = metadata.count
                envelope.metadata = entries
                envelopes.append(envelope)
                generators.append(group.generator)
            }
            ranges[group.workload] = start..<envelopes.count
        }
        self.envelopes = envelopes
        self.ranges = ranges
        self.generators = generators
        self.grpcHeaders = grpcHeaders
        self.grpcBodies = grpcBodies
    }

    deinit {
        for pointer in allocations { free(pointer) }
    }

    private static func copy(string: String, allocations: inout [UnsafeMutableRawPointer])
        -> UnsafeMutablePointer<CChar>
    {
        guard let copy = string.withCString({ strdup($0) }) else { fatalError("out of memory") }
        allocations.append(UnsafeMutableRawPointer(copy))
        return copy
    }

    private static func copy(bytes: [UInt8], allocations: inout [UnsafeMutableRawPointer]) -> ProtobufCBinaryData {
        guard !bytes.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        guard let pointer = malloc(bytes.count) else { fatalError("out of memory") }
        allocations.append(pointer)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { pointer.copyMemory(from: base, byteCount: raw.count) }
        }
        return ProtobufCBinaryData(len: bytes.count, data: pointer.assumingMemoryBound(to: UInt8.self))
    }

    private static func metadataEntries(_ metadata: [(String, String)], allocations: inout [UnsafeMutableRawPointer])
        -> UnsafeMutablePointer<UnsafeMutablePointer<Larder__Rpc__V1__RequestEnvelope__MetadataEntry>?>?
    {
        guard !metadata.isEmpty else { return nil }
        typealias Entry = Larder__Rpc__V1__RequestEnvelope__MetadataEntry
        guard let array = calloc(metadata.count, MemoryLayout<UnsafeMutablePointer<Entry>?>.stride) else {
            fatalError("out of memory")
        }
        allocations.append(array)
        let pointers = array.bindMemory(to: UnsafeMutablePointer<Entry>?.self, capacity: metadata.count)
        for (index, (key, value)) in metadata.enumerated() {
            guard let raw = calloc(1, MemoryLayout<Entry>.stride) else { fatalError("out of memory") }
            allocations.append(raw)
            let entry = raw.bindMemory(to: Entry.self, capacity: 1)
            larder__rpc__v1__request_envelope__metadata_entry__init(entry)
            entry.pointee.key = copy(string: key.lowercased(), allocations: &allocations)
            entry.pointee.value = copy(string: value, allocations: &allocations)
            pointers[index] = entry
        }
        return pointers
    }
}
