#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` metrics of Prometheus client libraries, read from
/// /proc the way client_golang and client_python read them.
struct ProcessMetrics: Sendable, Equatable {
    /// User plus system CPU time, in seconds.
    var cpuSeconds: Double
    /// Resident set size, in bytes.
    var residentMemoryBytes: UInt64
    /// Virtual memory size, in bytes.
    var virtualMemoryBytes: UInt64
    /// File descriptors open now.
    var openFDs: Int
    /// The soft limit on open file descriptors; nil when unlimited.
    var maxFDs: UInt64?
    /// When the process started, in seconds since the Unix epoch (clock-tick precision).
    var startTimeSeconds: Double

    /// This process's figures now; nil when /proc cannot be read (not Linux, or no procfs).
    static func read() -> ProcessMetrics? {
        guard let stat = readFile("/proc/self/stat"), let bootTime = bootTimeSeconds() else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = UInt64(max(0, sysconf(Int32(_SC_PAGESIZE))))
        // The fields after the command name, which is in parentheses and may hold spaces:
        // proc(5) fields 3 (state) onwards, so field N is at index N - 3.
        guard ticks > 0, let nameEnd = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = stat[stat.index(after: nameEnd)...].split(separator: UInt8(ascii: " ")).map {
            UInt64(String(decoding: $0, as: UTF8.self))
        }
        guard fields.count > 21, let utime = fields[11], let stime = fields[12], let start = fields[19],
              let vsize = fields[20], let rss = fields[21] else { return nil }
        var limit = rlimit()
        let maxFDs: UInt64? = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
            ? UInt64(limit.rlim_cur) : nil
        return ProcessMetrics(
            cpuSeconds: Double(utime + stime) / ticks, residentMemoryBytes: rss * pageSize, virtualMemoryBytes: vsize,
            openFDs: openFileDescriptors(), maxFDs: maxFDs, startTimeSeconds: Double(bootTime) + Double(start) / ticks)
    }

    /// Entries of /proc/self/fd (the directory's own descriptor included, as the client libraries count it).
    private static func openFileDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return count
    }

    /// `btime` of /proc/stat: when the machine booted, in seconds since the Unix epoch.
    private static func bootTimeSeconds() -> UInt64? {
        guard let stat = readFile("/proc/stat") else { return nil }
        for line in stat.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("btime ".utf8)) {
            return UInt64(String(decoding: line.dropFirst(6), as: UTF8.self).trimmingWhitespace())
        }
        return nil
    }

    /// A small /proc file whole (they report a size of 0, so read to the end).
    private static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}

private extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
