import LarderWire

/// A connection to a Larder server that carries many calls at once.
///
/// ```swift
/// let client = try LarderClient(server: ServerAddress(parsing: "127.0.0.1:7411"))
/// let location = try await client.call(LocationMethods.getLocation, GetLocationRequest(id: id))
/// ```
/// Calls may run concurrently from any task; replies are matched by call id.
/// Errors are always `RPCError`: the server's status, or UNAVAILABLE,
/// DEADLINE_EXCEEDED and CANCELLED raised by the client itself.
public final class LarderClient: Sendable {
    /// The server this client is connected to.
    public let server: ServerAddress
    public let options: ClientOptions
    private let connection: Connection

    /// Connects to `server`.
    /// - Throws: UNAVAILABLE `cannot connect to HOST:PORT: <reason>` when the
    ///   server cannot be reached within `options.connectTimeout`.
    public init(server: ServerAddress, options: ClientOptions = .init()) throws(RPCError) {
        self.server = server
        self.options = options
        self.connection = try Connection(address: server, connectTimeout: options.connectTimeout,
                                         maxFrameBytes: options.maxFrameBytes)
    }

    deinit {
        connection.close()
    }

    /// Calls `method` with `request` and decodes its reply.
    ///
    /// - Parameters:
    ///   - timeout: the call's deadline (also sent to the server); nil uses `options.defaultTimeout`.
    ///   - metadata: extra metadata for this call; keys are lower-cased and win over `options.metadata`.
    /// - Throws: the server's status; DEADLINE_EXCEEDED when the timeout passes without a reply;
    ///   UNAVAILABLE when the connection ends; CANCELLED after `close()` or task cancellation;
    ///   INTERNAL when the reply is not a valid `Resp`.
    public func call<Req, Resp>(_ method: RPCMethod<Req, Resp>, _ request: Req, timeout: Duration? = nil,
                                metadata: [String: String] = [:]) async throws(RPCError) -> Resp {
        let reply = try await callRaw(path: method.path, payload: ProtoCodec.encode(request),
                                      timeout: timeout, metadata: metadata)
        do {
            return try ProtoCodec.decode(Resp.self, from: reply)
        } catch {
            throw RPCError(.internal, "reply to \(method.path) is not a valid \(Resp.protoName): \(error.message)")
        }
    }

    /// Calls the method at `path` (e.g. `/larder.v1.LocationService/GetLocation`)
    /// with an already encoded request and returns the encoded reply.
    /// - Throws: as `call(_:_:timeout:metadata:)`.
    public func callRaw(path: String, payload: [UInt8], timeout: Duration? = nil,
                        metadata: [String: String] = [:]) async throws(RPCError) -> [UInt8] {
        var merged: [String: String] = [:]
        for (key, value) in options.metadata { merged[key.lowercased()] = value }
        for (key, value) in metadata { merged[key.lowercased()] = value }
        let effectiveTimeout = timeout ?? options.defaultTimeout
        if let effectiveTimeout, effectiveTimeout <= .zero {
            throw RPCError.invalidArgument("timeout must be positive, got \(effectiveTimeout)")
        }
        return try await connection.call(method: path, payload: payload, timeout: effectiveTimeout,
                                         metadata: merged).get()
    }

    /// Closes the connection; calls still waiting fail with CANCELLED, later calls too. Idempotent.
    public func close() {
        connection.close()
    }

    /// The number of calls waiting for a reply (for tests and diagnostics).
    public var pendingCallCount: Int { connection.pendingCount }
}
