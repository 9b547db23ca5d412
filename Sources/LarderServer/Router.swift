import LarderAPI
import LarderStore
import LarderWire

/// Maps full method names to handlers, built from the generated service descriptors.
///
/// Handlers are registered with typed `RPCMethod`s (which check their Swift
/// types against the descriptor's input and output), and `validate(serving:)`
/// refuses to start a server for which some method of a served service has no
/// handler, so proto/ and the server cannot drift apart.
struct Router: Sendable {
    private(set) var handlers: [String: MethodHandler] = [:] {
        didSet { table = MethodTable(handlers) }
    }
    /// `handlers` again, for lookups by the C string of an envelope.
    private var table = MethodTable([:])
    private let store: any Store

    init(store: any Store) {
        self.store = store
    }

    /// The handler for a full method name.
    func handler(for path: String) -> MethodHandler? { handlers[path] }

    /// Each method's `grpc_type` for the metrics (unary, server_stream, bidi_stream), by full name.
    var grpcTypes: [String: String] { handlers.mapValues(\.grpcType) }

    /// The handler for the NUL-terminated full method name `name`.
    func handler(for name: UnsafePointer<CChar>) -> MethodHandler? { table.handler(for: name) }

    /// Fails when a method of `services` has no handler, or a handler serves no listed method.
    func validate(serving services: [ServiceDescriptor]) throws(RPCError) {
        var expected = Set<String>()
        for service in services {
            for method in service.methods {
                expected.insert(method.path)
                if handlers[method.path] == nil {
                    throw RPCError.internalError("no handler for \(method.path), declared in proto/")
                }
            }
        }
        if let stray = handlers.keys.first(where: { !expected.contains($0) }) {
            throw RPCError.internalError("handler for \(stray), which no served service declares")
        }
    }

    /// Tags every handler with its method's slot in the metrics (`MetricsRecorder.index(of:)`).
    mutating func assignMetricsIndices(_ index: (String) -> Int) {
        handlers = handlers.mapValues { $0.withMetricsIndex(index($0.path)) }
    }

    /// A method answered on the event loop itself: no database, microseconds.
    mutating func inline<Request, Response>(
        _ method: RPCMethod<Request, Response>, isPublic: Bool = false,
        _ operation: @escaping @Sendable (Request, CallContext) throws(RPCError) -> Response
    ) {
        handlers[method.path] = MethodHandler(method: method.descriptor, isPublic: isPublic, execution: .inline { payload, scratch, context in
            do throws(RPCError) {
                let response = try operation(try scratch.unpack.decode(Request.self, from: payload), context)
                scratch.reply.removeAll(keepingCapacity: true)
                ProtoCodec.encode(response, appendingTo: &scratch.reply, using: scratch.build)
                return nil
            } catch {
                return error
            }
        })
    }

    /// A method that reads: runs on a reader connection, or, when `cost` says the request
    /// is a point read, maybe on the loop itself (`Store.read(_:_:completion:)`).
    mutating func read<Request, Response>(
        _ method: RPCMethod<Request, Response>,
        cost: @escaping @Sendable (Request) -> ReadCost = { _ in .query },
        _ operation: @escaping @Sendable (Request, any StoreReader) throws(RPCError) -> Response
    ) {
        read(method, replyingWith: Response.self, cost: cost, operation)
    }

    /// A method that reads and answers with `Reply`, a stand-in that encodes to
    /// the bytes of a `Response` (a page of stored encodings).
    mutating func read<Request, Response, Reply: WireEquivalent>(
        _ method: RPCMethod<Request, Response>,
        _ operation: @escaping @Sendable (Request, any StoreReader) throws(RPCError) -> Reply
    ) where Reply.Equivalent == Response {
        read(method, replyingWith: Reply.self, cost: { _ in .query }, operation)
    }

    private mutating func read<Request, Response, Reply: ProtoMessage>(
        _ method: RPCMethod<Request, Response>, replyingWith _: Reply.Type,
        cost: @escaping @Sendable (Request) -> ReadCost,
        _ operation: @escaping @Sendable (Request, any StoreReader) throws(RPCError) -> Reply
    ) {
        let store = self.store
        handlers[method.path] = Self.deferred(method) { request, context, respond in
            Self.submitRead(request, context, store: store, cost: cost(request), operation, respond)
        }
    }

    /// Submits a read; when it finds its connection without room (`CallContext.mustWait`),
    /// it parks, to be submitted again. A read whose connection closed before it ran ends
    /// CANCELLED without running (writes still run: `submitWrite`).
    private static func submitRead<Request: ProtoMessage, Reply: ProtoMessage>(
        _ request: Request, _ context: CallContext, store: any Store, cost: ReadCost,
        _ operation: @escaping @Sendable (Request, any StoreReader) throws(RPCError) -> Reply,
        _ respond: @escaping MethodHandler.Respond
    ) {
        // `submit` with the read made here, not `store.read`: that generic extension method
        // of an existential store runs unspecialized, and so would the read.
        store.submit(StoreRead(source: context.connectionID, { reader throws(RPCError) in
            if context.connectionClosed { throw CallContext.orphaned }
            try context.checkDeadline()
            // The resubmission is made only when it parks: a closure built on every call cost ~900
            // instructions (it copies the context).
            if context.mustWait {
                // Parking fails only when the connection has just closed: nobody would read the reply.
                guard context.park(resubmit: { submitRead(request, context, store: store, cost: cost, operation, respond) },
                                   abandon: { respond(.failure(CallContext.abandoned)) }) else {
                    throw CallContext.orphaned
                }
                throw CallContext.mustWaitSignal
            }
            reader.boundWaits(byDeadline: context.deadline)
            let encoded = ProtoCodec.encode(try operation(request, reader))
            try context.checkDeadline()
            return encoded
        }, completion: respond), cost: cost)
    }

    /// A method that writes: runs on the writer, group-committed; the reply
    /// goes out only after the transaction holding it has committed.
    mutating func write<Request, Response>(
        _ method: RPCMethod<Request, Response>,
        _ operation: @escaping @Sendable (Request, any StoreWriter) throws(RPCError) -> Response
    ) {
        write(method, encoding: { (request, writer) throws(RPCError) in ProtoCodec.encode(try operation(request, writer)) })
    }

    /// A method that writes and answers with the encoding it made for the store.
    mutating func write<Request, Response>(
        _ method: RPCMethod<Request, Response>,
        _ operation: @escaping @Sendable (Request, any StoreWriter) throws(RPCError) -> EncodedMessage<Response>
    ) {
        write(method, encoding: { (request, writer) throws(RPCError) in try operation(request, writer).bytes })
    }

    private mutating func write<Request, Response>(
        _ method: RPCMethod<Request, Response>,
        encoding operation: @escaping @Sendable (Request, any StoreWriter) throws(RPCError) -> [UInt8]
    ) {
        let store = self.store
        handlers[method.path] = Self.deferred(method) { request, context, respond in
            Self.submitWrite(request, context, store: store, operation, respond)
        }
    }

    /// Submits a write; it runs even when its connection closed before the writer took it
    /// (PROTOCOL.md §4, §10: a cancelled call the server started is committed). Writes never park: their replies are small, and a write that waited
    /// would let later writes of the same connection overtake it (the writer runs them in the
    /// order they came), or run twice when its batch is retried.
    private static func submitWrite<Request: ProtoMessage>(
        _ request: Request, _ context: CallContext, store: any Store,
        _ operation: @escaping @Sendable (Request, any StoreWriter) throws(RPCError) -> [UInt8],
        _ respond: @escaping MethodHandler.Respond
    ) {
        // The store bounds the transaction's waits by the latest deadline of its writes (`StoreWrite.deadline`).
        store.submit(StoreWrite(source: context.connectionID, deadline: context.deadline, { writer throws(RPCError) in
            // A queued call whose deadline already passed is not executed.
            try context.checkDeadline()
            return try operation(request, writer)
        }, completion: { result in
            guard case .success = result else { return respond(result) }
            do throws(RPCError) {
                try context.checkDeadline()
                respond(result)
            } catch {
                respond(.failure(error))
            }
        }))
    }

    /// A server-streaming method: `operation` runs on the loop with the decoded request and
    /// sends its messages through the stream, from whichever thread it hands the work to.
    mutating func serverStreaming<Request, Response>(
        _ method: StreamingRPCMethod<Request, Response>, isPublic: Bool = false,
        _ operation: @escaping @Sendable (Request, CallContext, ServerStream) -> Void
    ) {
        precondition(!method.isClientStreaming, "\(method.path) streams requests: register it as bidirectional")
        handlers[method.path] = MethodHandler(method: method.descriptor, isPublic: isPublic,
                                              execution: .serverStreaming { payload, scratch, context, stream in
            let request: Request
            do throws(RPCError) { request = try scratch.unpack.decode(Request.self, from: payload) } catch {
                return error
            }
            operation(request, context, stream)
            return nil
        })
    }

    /// A bidirectional-streaming method: `start` returns the receiver of the client's messages.
    mutating func bidirectional<Request, Response>(
        _ method: StreamingRPCMethod<Request, Response>, isPublic: Bool = false,
        _ start: @escaping @Sendable (CallContext, ServerStream) -> any ClientStreamReceiver
    ) {
        precondition(method.isClientStreaming && method.isServerStreaming, "\(method.path) is not bidirectional")
        handlers[method.path] = MethodHandler(method: method.descriptor, isPublic: isPublic,
                                              execution: .bidirectional(start))
    }

    /// A handler run on the store's threads: the request is decoded on the loop
    /// (a bad one is answered at once, by the returned error), then handed to `start`
    /// with the call.
    private static func deferred<Request, Response>(
        _ method: RPCMethod<Request, Response>,
        _ start: @escaping @Sendable (Request, CallContext, @escaping MethodHandler.Respond) -> Void
    ) -> MethodHandler {
        MethodHandler(method: method.descriptor, isPublic: false, execution: .deferred { payload, scratch, context, respond in
            let request: Request
            do throws(RPCError) { request = try scratch.unpack.decode(Request.self, from: payload) } catch {
                return error
            }
            start(request, context, respond)
            return nil
        })
    }
}
