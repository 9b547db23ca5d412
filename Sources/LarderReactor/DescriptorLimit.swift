#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which bounds how many
/// connections a server can hold whatever `--max-connections` says.
public enum DescriptorLimit {
    /// The soft limit in force, or nil when it cannot be read; unlimited reads as `Int.max`.
    public static var current: Int? { read().map(soft) }

    /// Raises the soft limit to the hard one (as Go's runtime and nginx do: the soft limit
    /// of a login shell is often 1,024 while the hard one allows far more) and returns the
    /// soft limit now in force, or nil when it cannot be read. Unlimited reads as `Int.max`.
    @discardableResult
    public static func raiseToHard() -> Int? {
        guard var limit = read() else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return soft(limit)
    }

    private static func read() -> rlimit? {
        var limit = rlimit()
        return getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? limit : nil
    }

    private static func soft(_ limit: rlimit) -> Int {
        limit.rlim_cur == rlim_t.max ? Int.max : Int(clamping: limit.rlim_cur)
    }
}
