import LarderWire

extension ResponseEnvelope {
    /// The error this reply gives the caller, nil when it is OK. A code outside gRPC's 0-16
    /// becomes UNKNOWN, as gRPC clients treat it, with the number kept in the message:
    /// `UNKNOWN: status code 99 from the server: …`.
    var clientError: RPCError? {
        guard statusCode != .ok else { return nil }
        guard StatusCode.allCanonical.contains(statusCode) else {
            let message = statusMessage.isEmpty ? "" : ": \(statusMessage)"
            return RPCError(.unknown, "status code \(statusCode.rawValue) from the server\(message)")
        }
        return RPCError(statusCode, statusMessage)
    }
}
