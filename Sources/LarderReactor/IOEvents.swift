import CEpoll

/// The readiness an `EventHandler` is interested in or notified of.
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
    public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
    /// The peer closed or the socket failed; reported whether asked for or not.
    public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue)
}

/// Something registered with an `EventLoop` for a file descriptor. Called on
/// the loop's thread only.
public protocol EventHandler: AnyObject {
    func handle(_ events: IOEvents)
}
