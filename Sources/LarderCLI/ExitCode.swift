public import LarderWire

/// Exit statuses of `larder`.
public enum ExitCode {
    public static let success: Int32 = 0
    /// The command ran but the answer is "no": `larder health` when the server is not SERVING.
    public static let notServing: Int32 = 1
    /// A command-line mistake.
    public static let usage: Int32 = 2
    /// The output could not be written (a full disk, a closed stdout): what was written is incomplete.
    public static let outputFailed: Int32 = 3
    /// Added to the gRPC status code of an error from the server or the connection.
    public static let statusBase: Int32 = 10

    /// `10 + code` for an RPC error (11 CANCELLED … 14 DEADLINE_EXCEEDED, 15 NOT_FOUND, 24 UNAVAILABLE,
    /// 26 UNAUTHENTICATED); a code outside 0-16 counts as UNKNOWN (12), as the client reports it.
    public static func forStatus(_ code: StatusCode) -> Int32 {
        guard code != .ok else { return success }
        guard StatusCode.allCanonical.contains(code) else { return statusBase + StatusCode.unknown.rawValue }
        return statusBase + code.rawValue
    }

    /// The exit status for `error`.
    public static func forError(_ error: CLIError) -> Int32 {
        switch error {
        case .usage: usage
        case .rpc(let rpc): forStatus(rpc.code)
        }
    }
}
