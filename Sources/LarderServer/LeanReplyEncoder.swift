import LarderWire

/// The lean protocol's replies: one length-prefixed ResponseEnvelope per call,
/// framed on the thread that produced the result.
struct LeanReplyEncoder: ReplyEncoder {
    func sendable(_ result: Result<[UInt8], RPCError>, callID: UInt64) -> Result<[UInt8], RPCError> {
        guard case .success(let payload) = result,
              let refusal = ResponseFrame.refusal(callID: callID, payload: payload) else { return result }
        return .failure(refusal)
    }

    func reply(callID: UInt64, result: Result<[UInt8], RPCError>) -> [UInt8] {
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
