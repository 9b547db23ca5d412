import CEpoll

/// The readiness an `EventHandler` is interested in or notified of.
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
    public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
    /// The peer closed or the socket failed; reported whether asked for or not.
    public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue)
    /// The socket can carry nothing more either way (reset, or shut down both ways) or has
    /// failed: reported whether asked for or not, and for as long as the descriptor is
    /// registered, so the handler must close it.
    public static let failed = IOEvents(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue)
}

/// Something registered with an `EventLoop` for a file descriptor. Called on
/// the loop's thread only.
public protocol EventHandler: AnyObject {
    func handle(_ events: IOEvents)
}
