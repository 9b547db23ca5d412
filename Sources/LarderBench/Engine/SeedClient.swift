import LarderAPI
import LarderSystem
import LarderTLS
import LarderWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain blocking client for creating the data a run needs: sends calls in
/// pipelined batches over one connection and returns the replies in order.
final class SeedClient {
    private let fd: Int32
    /// The connection's TLS session, with `--tls`.
    private let link: BenchTLSLink?
    private let address: BenchAddress
    private let metadata: [String: String]
    private var decoder = FrameDecoder()
    private var nextCallID: UInt64 = 1
    private let deadline: UInt64

    /// Connects (over TLS with `tls`) within `connectTimeoutSeconds`; every call must finish
    /// within `timeoutSeconds` of now.
    init(address: BenchAddress, tls: BenchTLSContext?, metadata: [String: String], connectTimeoutSeconds: Double,
         timeoutSeconds: Double) throws(RPCError) {
        if let tls {
            (fd, link, _) = try tls.connect(timeoutSeconds: connectTimeoutSeconds, nonBlocking: false)
        } else {
            fd = try TCPSocket.connect(to: address, timeoutSeconds: connectTimeoutSeconds, nonBlocking: false)
            link = nil
        }
        self.address = address
        self.metadata = metadata
        deadline = MonotonicClock.nanoseconds() + MonotonicClock.nanoseconds(seconds: timeoutSeconds)
        // A server that sends nothing for this long is stuck: give up then, not at the whole
        // deadline (600 s for a clean-up, which a frozen server held that long).
        silence = Int(min(max(1, timeoutSeconds), Self.silenceSeconds))
        var timeout = timeval(tv_sec: silence, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The longest a call waits with no byte from the server.
    static let silenceSeconds: Double = 30
    /// `silenceSeconds`, or the whole timeout when shorter.
    private let silence: Int

    deinit { TCPSocket.close(fd) }

    /// Calls `method` once per request, `batch` calls in flight at a time;
    /// `onBatch` gets each batch's responses as they arrive.
    /// - Returns: the decoded responses, in request order.
    /// - Throws: the first failed call's error, naming the method; CANCELLED between batches once `cancellation` is set.
    func callAll<Request, Response>(_ method: RPCMethod<Request, Response>, _ requests: [Request], batch: Int = 100,
                                    cancellation: BenchCancellation? = nil,
                                    onBatch: ([Response]) -> Void = { _ in }) throws(RPCError) -> [Response]
    {
        var responses: [Response] = []
        responses.reserveCapacity(requests.count)
        var offset = 0
        while offset < requests.count {
            if cancellation?.isCancelled == true {
                throw RPCError(.cancelled, "interrupted while creating data (\(offset) of \(requests.count) done)")
            }
            try checkDeadline(method, done: offset, of: requests.count)
            let chunk = Array(requests[offset..<min(offset + batch, requests.count)])
            var decoded: [Response] = []
            for outcome in try exchangeWithinLimit(method.path, chunk.map { ProtoCodec.encode($0) }) {
                switch outcome {
                case .success(let payload): decoded.append(try ProtoCodec.decode(Response.self, from: payload))
                case .failure(let error):
                    onBatch(decoded)
                    throw RPCError(error.code, "\(method.path) failed while creating data: \(error.message)")
                }
            }
            onBatch(decoded)
            responses += decoded
            offset += chunk.count
        }
        return responses
    }

    /// Calls `method` once per request, `batch` at a time, where NOT_FOUND counts as done (deleting).
    /// - Returns: how many calls ended OK.
    /// - Throws: the first other failure, naming the method.
    func callEach<Request, Response>(_ method: RPCMethod<Request, Response>, _ requests: [Request], batch: Int = 100)
        throws(RPCError) -> Int
    {
        var succeeded = 0
        var offset = 0
        while offset < requests.count {
            try checkDeadline(method, done: offset, of: requests.count)
            let chunk = Array(requests[offset..<min(offset + batch, requests.count)])
            for outcome in try exchangeWithinLimit(method.path, chunk.map { ProtoCodec.encode($0) }) {
                switch outcome {
                case .success: succeeded += 1
                case .failure(let error) where error.code == .notFound: continue
                case .failure(let error): throw RPCError(error.code, "\(method.path) failed: \(error.message)")
                }
            }
            offset += chunk.count
        }
        return succeeded
    }

    /// One call; the decoded response.
    func call<Request, Response>(_ method: RPCMethod<Request, Response>, _ request: Request) throws(RPCError) -> Response {
        switch try exchange(method.path, [ProtoCodec.encode(request)])[0] {
        case .success(let payload): return try ProtoCodec.decode(Response.self, from: payload)
        case .failure(let error): throw RPCError(error.code, "\(method.path) failed: \(error.message)")
        }
    }

    private func checkDeadline<Request, Response>(_ method: RPCMethod<Request, Response>, done: Int, of total: Int)
        throws(RPCError)
    {
        guard MonotonicClock.nanoseconds() < deadline else {
            throw .deadlineExceeded("\(method.path) took too long (\(done) of \(total) done)")
        }
    }

    /// Calls the server would take in flight at once on this connection: lowered when it refuses
    /// calls over its `--max-calls-per-connection` (which a batch of 100 exceeds on a server
    /// started with a lower limit).
    private var window = Int.max

    /// `exchange` in batches of at most `window`; calls refused for too many in flight (never
    /// run) are sent again in smaller batches. Per request, in order, its payload or its error.
    private func exchangeWithinLimit(_ path: String, _ payloads: [[UInt8]]) throws(RPCError) -> [Result<[UInt8], RPCError>] {
        var results = [Result<[UInt8], RPCError>?](repeating: nil, count: payloads.count)
        var pending = Array(payloads.indices)
        while !pending.isEmpty {
            let batch = Array(pending.prefix(window))
            let outcomes = try exchange(path, batch.map { payloads[$0] })
            var refused: [Int] = []
            for (index, outcome) in zip(batch, outcomes) {
                if case .failure(let error) = outcome, error.isTooManyCallsInFlight {
                    refused.append(index)
                } else {
                    results[index] = outcome
                }
            }
            if !refused.isEmpty {
                let accepted = batch.count - refused.count
                guard accepted > 0 || window > 1 else {  // one call at a time, refused whole: give up
                    results[batch[0]] = outcomes[0]
                    break
                }
                window = max(1, accepted > 0 ? accepted : batch.count / 2)
            }
            pending = refused + pending.dropFirst(batch.count)
        }
        return results.map { $0 ?? .failure(RPCError(.resourceExhausted, "too many calls in flight on this connection")) }
    }

    /// Sends one pipelined batch and waits for every reply: per request, its payload or its error.
    private func exchange(_ path: String, _ payloads: [[UInt8]]) throws(RPCError) -> [Result<[UInt8], RPCError>] {
        var output: [UInt8] = []
        var ids: [UInt64: Int] = [:]
        for (position, payload) in payloads.enumerated() {
            let envelope = RequestEnvelope(callID: nextCallID, method: path, payload: payload, metadata: metadata)
            ids[nextCallID] = position
            nextCallID += 1
            Frame.append(ProtoCodec.encode(envelope), to: &output)
        }
        try send(output)
        var replies = [Result<[UInt8], RPCError>?](repeating: nil, count: payloads.count)
        var received = 0
        while received < payloads.count {
            let envelope = try ProtoCodec.decode(ResponseEnvelope.self, from: try nextFrame())
            if envelope.callID == 0, let error = envelope.error {
                throw RPCError(error.code, "the server closed the connection: \(error.message)")
            }
            guard let position = ids[envelope.callID], replies[position] == nil else {
                throw .internalError("server replied to unknown call id \(envelope.callID)")
            }
            replies[position] = envelope.error.map { .failure($0) } ?? .success(envelope.payload)
            received += 1
        }
        return replies.compactMap { $0 }
    }

    private func send(_ bytes: [UInt8]) throws(RPCError) {
        if let link {
            do throws(TLSError) {
                try link.seal(bytes)
            } catch {
                throw RPCError(error.code, "TLS: \(error.message)")
            }
            try link.flushAll(fd, deadline: deadline, address: address)
            return
        }
        var offset = 0
        while offset < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                TCPSocket.write(fd, from: raw.baseAddress! + offset, count: raw.count - offset)
            }
            switch result {
            case .bytes(let count): offset += count
            case .wouldBlock, .closed: throw .unavailable("connection to \(address) closed while creating data")
            case .failed(let code): throw .unavailable("write to \(address) failed: \(TCPSocket.errnoText(code))")
            }
        }
    }

    private func nextFrame() throws(RPCError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            do {
                if let frame = try decoder.next() { return frame }
            } catch {
                throw .internalError("server sent an oversized frame while creating data")
            }
            guard MonotonicClock.nanoseconds() < deadline else { throw .deadlineExceeded("server did not reply in time") }
            if let link {
                let address = address
                let quietUntil = MonotonicClock.nanoseconds() + MonotonicClock.nanoseconds(seconds: Double(silence))
                guard try link.readOnce(fd, deadline: min(deadline, quietUntil), address: address, describe: { error in
                    RPCError(error.code, "TLS error on the connection to \(address): \(error.message)")
                }) else {
                    throw .unavailable("\(address) closed the connection while creating data")
                }
                link.plaintext.withUnsafeBytes { decoder.append($0) }
                continue
            }
            let result = chunk.withUnsafeMutableBytes { raw in TCPSocket.read(fd, into: raw.baseAddress!, count: raw.count) }
            switch result {
            case .bytes(let count): chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            case .wouldBlock:  // SO_RCVTIMEO: nothing came for silenceSeconds
                throw .deadlineExceeded("\(address) sent nothing for \(silence) s (a stuck server?)")
            case .closed: throw .unavailable("\(address) closed the connection while creating data")
            case .failed(let code): throw .unavailable("read from \(address) failed: \(TCPSocket.errnoText(code))")
            }
        }
    }
}

extension RPCError {
    static func deadlineExceeded(_ message: String) -> RPCError { RPCError(.deadlineExceeded, message) }
}
