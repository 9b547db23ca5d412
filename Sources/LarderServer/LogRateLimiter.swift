import LarderSystem

/// The state of a `LogRateLimit`: a window per event, shared by every copy of a `Logger` and
/// by every thread that logs through it.
final class LogRateLimiter: Sendable {
    /// The lines of one event in its current window.
    struct Window {
        var start: UInt64
        var level: Logger.Level
        var written = 1
        var suppressed = 0
    }

    /// Lines held back in a window that is over: one `log_suppressed` line says so.
    struct Suppressed: Equatable {
        var event: String
        var level: Logger.Level
        var lines: Int
    }

    let limit: LogRateLimit
    private let intervalNanoseconds: UInt64
    private let windows = LockedValue<[String: Window]>([:])

    init(_ limit: LogRateLimit) {
        self.limit = limit
        intervalNanoseconds = UInt64(max(limit.intervalSeconds, 0)) * 1_000_000_000
    }

    /// True when lines of `event` are counted.
    func limits(_ event: String) -> Bool { limit.events.contains(event) }

    /// Whether a line of `event` may be written at `now`, and what the window that ended before
    /// it held back (to be reported first).
    func admit(_ event: String, level: Logger.Level, now: UInt64) -> (write: Bool, ended: Suppressed?) {
        windows.withLock { windows in
            if var window = windows[event], now &- window.start < intervalNanoseconds {
                let write = window.written < limit.lines
                if write { window.written += 1 } else { window.suppressed += 1 }
                windows[event] = window
                return (write, nil)
            }
            let ended = windows[event].flatMap(Self.suppressed(event))
            windows[event] = Window(start: now, level: level)
            return (limit.lines > 0, ended)
        }
    }

    /// The windows over at `now` (every window when nil) that held lines back, forgetting
    /// every window that is over.
    func takeEnded(now: UInt64?) -> [Suppressed] {
        windows.withLock { windows in
            let over = windows.filter { window in now.map { $0 &- window.value.start >= intervalNanoseconds } ?? true }
            for event in over.keys { windows[event] = nil }
            return over.compactMap { Self.suppressed($0.key)($0.value) }.sorted { $0.event < $1.event }
        }
    }

    private static func suppressed(_ event: String) -> (Window) -> Suppressed? {
        { window in window.suppressed > 0 ? Suppressed(event: event, level: window.level, lines: window.suppressed) : nil }
    }
}
