/// An error with a gRPC canonical status code and a message a user can act on.
///
/// This is the one error type that crosses the wire: the server turns it into
/// the status of a ResponseEnvelope, and the client throws it back.
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: StatusCode
    public var message: String

    public init(_ code: StatusCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `NOT_FOUND: location "..." not found`
    public var description: String { message.isEmpty ? code.name : "\(code.name): \(message)" }

    public static func invalidArgument(_ message: String) -> RPCError { RPCError(.invalidArgument, message) }
    public static func notFound(_ message: String) -> RPCError { RPCError(.notFound, message) }
    public static func alreadyExists(_ message: String) -> RPCError { RPCError(.alreadyExists, message) }
    public static func failedPrecondition(_ message: String) -> RPCError { RPCError(.failedPrecondition, message) }
    public static func internalError(_ message: String) -> RPCError { RPCError(.internal, message) }
    public static func unavailable(_ message: String) -> RPCError { RPCError(.unavailable, message) }
}
