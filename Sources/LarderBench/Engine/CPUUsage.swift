import Foundation
import LarderSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time used by this process (getrusage) and by another one (/proc/PID/stat).
enum CPUUsage {
    /// User + system CPU seconds of this process, all threads.
    static func selfSeconds() -> Double {
        var usage = rusage()
        guard getrusage(selfWho, &usage) == 0 else { return 0 }
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_stime.tv_sec)
            + (Double(usage.ru_utime.tv_usec) + Double(usage.ru_stime.tv_usec)) / 1e6
    }

    #if canImport(Glibc)
    private static let selfWho = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    private static let selfWho = RUSAGE_SELF
    #endif

    /// utime + stime of process `pid` in seconds, from /proc/PID/stat; nil when unreadable.
    static func processSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parseStat(text)
    }

    /// utime + stime in seconds from the text of a /proc/PID/stat file.
    static func parseStat(_ text: String) -> Double? {
        // The command name (field 2) is in parentheses and may contain spaces.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime field 14, stime field 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) / (ticks > 0 ? ticks : 100)
    }
}

/// CPU and wall-clock readings at one moment.
struct CPUSample: Sendable {
    var wallNanoseconds: UInt64
    var selfSeconds: Double
    var serverSeconds: Double?

    static func take(serverPID: Int32?) -> CPUSample {
        CPUSample(wallNanoseconds: MonotonicClock.nanoseconds(), selfSeconds: CPUUsage.selfSeconds(),
                  serverSeconds: serverPID.flatMap { CPUUsage.processSeconds(pid: $0) })
    }
}
