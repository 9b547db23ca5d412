/// How `LarderClient` waits between attempts to reconnect after its connection ended:
/// bounded exponential backoff with jitter, as gRPC's connection backoff.
///
/// The first call after the connection ended reconnects at once; each failed attempt
/// multiplies the wait before the next one (up to `maximum`), and calls during the wait
/// fail at once with UNAVAILABLE. A successful connection resets it.
public struct ReconnectBackoff: Sendable, Equatable {
    /// The wait after the first failed attempt.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration
    /// Each failed attempt multiplies the wait by this.
    public var multiplier: Double
    /// The wait is varied by up to this fraction either way, so many clients do not retry in step.
    public var jitter: Double

    public init(initial: Duration = .milliseconds(200), maximum: Duration = .seconds(10), multiplier: Double = 1.6,
                jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The wait after `failures` failed attempts in a row (1 = the first), jittered by `random` in -1...1.
    public func delay(afterFailures failures: Int, random: Double) -> Duration {
        let initialSeconds = Self.seconds(initial)
        let maximumSeconds = Self.seconds(maximum)
        var seconds = initialSeconds
        for _ in 1..<max(1, failures) where seconds < maximumSeconds { seconds *= max(1, multiplier) }
        seconds = min(seconds, maximumSeconds)
        seconds *= 1 + min(max(jitter, 0), 1) * min(max(random, -1), 1)
        return .nanoseconds(Int64(max(0, seconds) * 1e9))
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
