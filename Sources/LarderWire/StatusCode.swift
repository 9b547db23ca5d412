/// A gRPC canonical status code, with gRPC's fixed numbers.
///
/// A struct rather than an enum so that a code this build does not know
/// (from a newer peer) still round-trips.
public struct StatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = StatusCode(rawValue: 0)
    public static let cancelled = StatusCode(rawValue: 1)
    public static let unknown = StatusCode(rawValue: 2)
    public static let invalidArgument = StatusCode(rawValue: 3)
    public static let deadlineExceeded = StatusCode(rawValue: 4)
    public static let notFound = StatusCode(rawValue: 5)
    public static let alreadyExists = StatusCode(rawValue: 6)
    public static let permissionDenied = StatusCode(rawValue: 7)
    public static let resourceExhausted = StatusCode(rawValue: 8)
    public static let failedPrecondition = StatusCode(rawValue: 9)
    public static let aborted = StatusCode(rawValue: 10)
    public static let outOfRange = StatusCode(rawValue: 11)
    public static let unimplemented = StatusCode(rawValue: 12)
    public static let `internal` = StatusCode(rawValue: 13)
    public static let unavailable = StatusCode(rawValue: 14)
    public static let dataLoss = StatusCode(rawValue: 15)
    public static let unauthenticated = StatusCode(rawValue: 16)

    /// Every canonical code, in numeric order.
    public static let allCanonical: [StatusCode] = (0...16).map { StatusCode(rawValue: $0) }

    private static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
        "UNAUTHENTICATED",
    ]

    /// The canonical upper-case name, e.g. `NOT_FOUND`; `CODE_42` for unknown numbers.
    public var name: String {
        Self.names.indices.contains(Int(rawValue)) ? Self.names[Int(rawValue)] : "CODE_\(rawValue)"
    }

    /// Looks a code up by its canonical name (case-insensitive).
    public init?(name: String) {
        guard let index = Self.names.firstIndex(of: name.uppercased()) else { return nil }
        self.init(rawValue: Int32(index))
    }

    public var description: String { name }
}
