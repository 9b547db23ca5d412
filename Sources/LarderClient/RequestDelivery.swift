import LarderWire

/// Whether the request of a call pending when its connection broke or closed had been sent:
/// the `RPCError.cause` of such a failure (not of a status the server sent for the whole
/// connection, nor of a call made after the end). A request sent may have been applied by the
/// server (it runs a write it has read even if the connection then ends), so a write that
/// failed `.sent` is not safe to retry blindly; one `.notSent` never reached the server.
public enum RequestDelivery: Error, Sendable, Equatable {
    /// Some or all of the request was written to the connection (with TLS: sealed for it).
    case sent
    /// None of the request was written.
    case notSent

    /// What the client's error message says about it.
    var explanation: String {
        switch self {
        case .sent: "the request was sent: the server may have applied it"
        case .notSent: "the request was not sent"
        }
    }
}
