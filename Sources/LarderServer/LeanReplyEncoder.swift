import LarderWire

/// The lean protocol's replies: one length-prefixed ResponseEnvelope per call,
/// framed on the thread that produced the result.
struct LeanReplyEncoder: ReplyEncoder {
    func reply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: [UInt8], refusal: RPCError?) {
        ResponseFrame.encode(callID: callID, result: result)
    }

    /// Never used: the core starts no streaming call on a lean connection (`supportsStreaming`).
    func streamMessage(callID: UInt64, payload: [UInt8]) -> [UInt8] {
        assertionFailure("the lean protocol carries no streams")
        return []
    }

    func streamEnd(callID: UInt64, error: RPCError?) -> [UInt8] {
        assertionFailure("the lean protocol carries no streams")
        return []
    }
}
