public import LarderServer

/// Everything `larder-server` can be told: how to serve, and which database to serve from.
public struct LaunchConfiguration: Sendable {
    /// Addresses, limits, timeouts, auth and logging, for `Server`.
    public var server = ServerConfiguration()
    /// The backend and its options, for opening the `Store`.
    public var database = DatabaseConfiguration()

    public init() {}
}
