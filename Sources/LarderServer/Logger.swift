import LarderSystem
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// Structured log lines in logfmt on stderr, one line per event:
/// `ts=2026-11-30T08:00:00.123Z level=info event=listening address=127.0.0.1:7411`.
public struct Logger: Sendable {
    /// Severity, in increasing order.
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warn, error

        public var name: String { ["debug", "info", "warn", "error"][rawValue] }

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public let minimumLevel: Level
    private let fd: Int32
    /// Shared by every copy of this logger.
    private let limiter: LogRateLimiter

    /// A logger writing to `fd` (stderr by default) every event at `minimumLevel` or above,
    /// the events of `rateLimit` at most as often as it says.
    public init(minimumLevel: Level = .info, fd: Int32 = 2, rateLimit: LogRateLimit = .peerTriggered) {
        self.minimumLevel = minimumLevel
        self.fd = fd
        self.limiter = LogRateLimiter(rateLimit)
    }

    /// True when events at `level` are written.
    public func enabled(_ level: Level) -> Bool { level >= minimumLevel }

    public func debug(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible> = [:]) {
        log(.debug, event, fields)
    }

    public func info(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible> = [:]) {
        log(.info, event, fields)
    }

    public func warn(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible> = [:]) {
        log(.warn, event, fields)
    }

    public func error(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible> = [:]) {
        log(.error, event, fields)
    }

    /// An info line written whatever the minimum level: what a supervisor, script or test reads
    /// to find the server (`listening` with the port it bound when 0 was asked for).
    public func announce(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible> = [:]) {
        emit(.info, event, fields)
    }

    /// Writes one line with one write(2) (more only when stderr takes part of it: a full pipe
    /// left non-blocking), so lines from threads do not interleave; an event of the rate limit
    /// past its lines for the interval is counted instead.
    public func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible>) {
        guard enabled(level) else { return }
        if limiter.limits(event) {
            let (write, ended) = limiter.admit(event, level: level, now: MonotonicClock.nanoseconds())
            if let ended { logSuppressed(ended) }
            guard write else { return }
        }
        emit(level, event, fields)
    }

    /// Writes a `log_suppressed` line for each rate-limited event whose interval is over (or,
    /// with `all`, not yet over) and that had lines held back in it. The server calls this
    /// every tick, so the count is written even when no line of that event follows, and once
    /// more as it stops.
    public func flushSuppressed(all: Bool = false) {
        for ended in limiter.takeEnded(now: all ? nil : MonotonicClock.nanoseconds()) { logSuppressed(ended) }
    }

    private func logSuppressed(_ ended: LogRateLimiter.Suppressed) {
        emit(ended.level, "log_suppressed", ["suppressed": ended.event, "lines": ended.lines,
                                             "interval_s": limiter.limit.intervalSeconds, "limit": limiter.limit.lines])
    }

    private func emit(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible>) {
        var line = "ts=\(Self.timestamp()) level=\(level.name) event=\(Self.quoted(event))"
        for (key, value) in fields {
            line += " \(key)=\(Self.quoted(value.description))"
        }
        line += "\n"
        Self.writeRaw(line, fd: fd)
    }

    /// Writes `text` to `fd` whole, with no formatting: short writes, EINTR and a descriptor
    /// left non-blocking and full cut no line in half (`DescriptorWriter.writeAll`). A
    /// non-blocking descriptor whose reader stalls holds the caller (the event loop) a second
    /// at most per wait; then the rest of the line is dropped.
    public static func writeRaw(_ text: String, fd: Int32) {
        _ = DescriptorWriter.writeAll(fd, text, waitMilliseconds: 1000)
    }

    /// The most UTF-8 bytes of one value a line shows: a client's 4 MiB method name must not
    /// make a 4 MiB log line per call.
    static let maxValueBytes = 4096

    /// A logfmt value: bare when safe, else double-quoted with escapes (control characters,
    /// C1 included, as `\u{…}`); over `maxValueBytes`, cut on a scalar boundary and quoted,
    /// ending `… (N bytes)` with its full size.
    static func quoted(_ value: String) -> String {
        var value = value
        var cutFrom: Int?
        if value.utf8.count > maxValueBytes {
            cutFrom = value.utf8.count
            var end = value.utf8.index(value.utf8.startIndex, offsetBy: maxValueBytes)
            while end > value.startIndex && end.samePosition(in: value.unicodeScalars) == nil {
                end = value.utf8.index(before: end)
            }
            value = String(value.unicodeScalars[..<end])
        }
        let needsQuotes = cutFrom != nil || value.isEmpty || value.unicodeScalars.contains { scalar in
            scalar == " " || scalar == "=" || scalar == "\"" || scalar == "\\" || SafeText.needsEscape(scalar)
        }
        guard needsQuotes else { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if SafeText.needsEscape(scalar) {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        if let cutFrom { return out + "… (\(cutFrom) bytes)\"" }
        return out + "\""
    }

    /// Now as RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return timestamp(seconds: Int64(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
    }

    /// `seconds` since the Unix epoch as RFC 3339 UTC ("2026-11-30T08:00:00.123Z"); without
    /// `milliseconds`, to the second ("2026-11-30T08:00:00Z").
    static func timestamp(seconds: Int64, milliseconds: Int? = nil) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let date = "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T"
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
        return date + (milliseconds.map { ".\(pad($0, 3))" } ?? "") + "Z"
    }
}
