import LarderWire
import Synchronization
import LarderSystem

/// The response side of a streaming call: a handler sends any number of
/// messages, then finishes with a status. Any thread.
///
/// Each message is encoded by the transport's `ReplyEncoder` on the calling
/// thread and queued for the loop, like a unary reply. After `finish`, or once
/// the call was cancelled (the client went away), `send` does nothing; `finish`
/// must still be called, exactly once, so the call stops counting in flight.
final class ServerStream: Sendable {
    let context: CallContext
    private let core: CallCore
    private let encoder: any ReplyEncoder
    private let methodIndex: Int
    /// 0 open, 1 cancelled, 2 finished.
    private let state = Atomic<Int>(0)
    /// Run once when the call is cancelled (`onCancel`).
    private let cancelHandler = LockedValue<(@Sendable () -> Void)?>(nil)

    init(context: CallContext, core: CallCore, encoder: any ReplyEncoder, methodIndex: Int) {
        self.context = context
        self.core = core
        self.encoder = encoder
        self.methodIndex = methodIndex
    }

    /// True once the call is over for its handler (the client is gone, the call was cancelled or
    /// ended by the core, or it finished): stop producing messages.
    var isCancelled: Bool { state.load(ordering: .acquiring) != 0 }

    /// Sends one encoded response message. Returns false when the call is over or cancelled.
    @discardableResult
    func send(_ message: [UInt8]) -> Bool {
        guard state.load(ordering: .acquiring) == 0 else { return false }
        core.queue(encoder.streamMessage(callID: context.callID, payload: message), context: context, finished: nil)
        core.wakeForReplies()
        return true
    }

    /// Sends a message of type `Message`.
    @discardableResult
    func send<Message: ProtoMessage>(_ message: Message) -> Bool { send(ProtoCodec.encode(message)) }

    /// Ends the call with OK (`error` nil) or `error`. Only the first call counts.
    func finish(_ error: RPCError? = nil) {
        // Over: the cancel hook (which may hold this stream) is let go.
        if finishOnce(error) { _ = takeCancelHandler() }
    }

    /// `finish`; false when the call had finished already.
    @discardableResult
    private func finishOnce(_ error: RPCError?) -> Bool {
        var current = state.load(ordering: .acquiring)
        while current != 2 {
            let (exchanged, original) = state.compareExchange(expected: current, desired: 2, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
        guard current != 2 else { return false }
        let error = error.map { core.publicError($0, context) }
        let bytes = encoder.streamEnd(callID: context.callID, error: error)
        core.queue(bytes, context: context, finished: FinishedCall(
            context, methodIndex: methodIndex, code: error?.code ?? .ok, message: error?.message ?? "",
            replyBytes: bytes.count))
        core.wakeForReplies()
        return true
    }

    /// From the core on the loop: the connection closed or the transport cancelled the call.
    func cancel() {
        guard state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged else { return }
        takeCancelHandler()?()
    }

    /// Runs `body` when the call is cancelled (at once if it already was), on the thread that
    /// cancels it: a handler that waits for events, not for the client, finishes the call there.
    func onCancel(_ body: @escaping @Sendable () -> Void) {
        cancelHandler.withLock { $0 = body }
        if isCancelled { takeCancelHandler()?() }
    }

    /// Ends the call with `error` on the core's behalf (its deadline passed, the server is
    /// draining): the handler's later messages and `finish` are dropped, and it is told through
    /// `onCancel`. False when the call was already over.
    @discardableResult
    func end(_ error: RPCError) -> Bool {
        guard finishOnce(error) else { return false }
        takeCancelHandler()?()
        return true
    }

    private func takeCancelHandler() -> (@Sendable () -> Void)? {
        cancelHandler.withLock { handler in
            defer { handler = nil }
            return handler
        }
    }
}

/// What a bidirectional call's handler does with the client's messages. Loop thread only.
protocol ClientStreamReceiver: AnyObject {
    /// One request message; `payload` is valid only during the call (decode it in `scratch`).
    func received(_ payload: UnsafeRawBufferPointer, scratch: CallScratch)
    /// The client sent its last message (half-close).
    func halfClosed()
    /// The call is cancelled (the client reset it or went away); no more messages come.
    func cancelled()
}
