import LarderWire

/// Turns a call's results into a transport's bytes. Sendable: used on whichever
/// thread produced the result, so the loop only moves finished bytes.
protocol ReplyEncoder: Sendable {
    /// The bytes that end unary call `callID` with `result`: the response, or the error's
    /// status; and the refusal they carry instead of an OK the transport cannot (a lean reply
    /// too large for its frame), so that the metrics and the access log count what the client gets.
    func reply(callID: UInt64, result: Result<[UInt8], RPCError>) -> (bytes: [UInt8], refusal: RPCError?)
    /// The bytes of one message of streaming call `callID`'s responses.
    func streamMessage(callID: UInt64, payload: [UInt8]) -> [UInt8]
    /// The bytes that end streaming call `callID`: OK, or the error's status.
    func streamEnd(callID: UInt64, error: RPCError?) -> [UInt8]
}
