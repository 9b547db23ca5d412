import LarderWire

/// One `grpc.reflection.v1(alpha).ServerReflection/ServerReflectionInfo` stream: each request
/// the client sends is answered at once, on the loop, by the stream's own
/// `GRPCReflectionResponder`; the call ends with OK when the client half-closes.
///
/// v1alpha requests are decoded as v1 ones: the two packages have the same messages on the wire.
final class GRPCReflectionStream: ClientStreamReceiver {
    private var responder: GRPCReflectionResponder
    private let stream: ServerStream

    init(services: [String], stream: ServerStream) {
        responder = GRPCReflectionResponder(services: services)
        self.stream = stream
    }

    func received(_ payload: UnsafeRawBufferPointer, scratch: CallScratch) {
        let request: GRPCReflectionResponder.Request
        do throws(RPCError) {
            request = try scratch.unpack.decode(GRPCReflectionResponder.Request.self, from: payload)
        } catch {
            stream.finish(RPCError(.invalidArgument, "malformed ServerReflectionRequest: \(error.message)"))
            return
        }
        stream.send(responder.answer(request))
    }

    func halfClosed() { stream.finish() }

    func cancelled() { stream.finish(RPCError(.cancelled, "the reflection stream was cancelled")) }
}
