/// An error with a gRPC canonical status code and a message a user can act on.
///
/// This is the one error type that crosses the wire: the server turns it into
/// the status of a ResponseEnvelope, and the client throws it back. `cause`,
/// the underlying error (a database's own error), never crosses the wire: it is
/// for the server's log. Two errors are equal when their code and message are.
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: StatusCode
    public var message: String
    /// What went wrong underneath, for the server's log only.
    public var cause: (any Error & Sendable)?

    public init(_ code: StatusCode, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// `NOT_FOUND: location "..." not found`
    public var description: String { message.isEmpty ? code.name : "\(code.name): \(message)" }

    /// The message and, when there is one, the cause: what a server log line says.
    public var logDescription: String {
        guard let cause else { return message }
        return "\(message) (cause: \(String(describing: cause)))"
    }

    public static func == (lhs: RPCError, rhs: RPCError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    public static func invalidArgument(_ message: String) -> RPCError { RPCError(.invalidArgument, message) }
    public static func notFound(_ message: String) -> RPCError { RPCError(.notFound, message) }
    public static func alreadyExists(_ message: String) -> RPCError { RPCError(.alreadyExists, message) }
    public static func failedPrecondition(_ message: String) -> RPCError { RPCError(.failedPrecondition, message) }
    public static func internalError(_ message: String, cause: (any Error & Sendable)? = nil) -> RPCError {
        RPCError(.internal, message, cause: cause)
    }
    public static func unavailable(_ message: String) -> RPCError { RPCError(.unavailable, message) }

    /// The refusal of a call over `--max-calls-per-connection` (never run, so safe to send again).
    public static func tooManyCallsInFlight(limit: Int) -> RPCError {
        RPCError(.resourceExhausted, "\(tooManyCallsInFlightText) (limit \(limit))")
    }

    /// True for a `tooManyCallsInFlight` refusal, as a client receives it.
    public var isTooManyCallsInFlight: Bool {
        code == .resourceExhausted && message.hasPrefix(Self.tooManyCallsInFlightText)
    }

    private static let tooManyCallsInFlightText = "too many calls in flight on this connection"
}
