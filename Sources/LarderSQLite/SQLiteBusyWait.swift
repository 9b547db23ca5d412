import CSQLite
import LarderSystem
import Synchronization

/// How the store's connections wait for a lock another process holds (SQLite's busy
/// handler): retrying for up to `timeoutMilliseconds`, as `PRAGMA busy_timeout` does, but
/// giving up at once when the store is closing (`abandon()`), so that a server stopping after
/// its drain timeout is not held for the rest of a long `--busy-timeout` by a write that
/// waits for a lock (the call fails `UNAVAILABLE`, "the database is busy": never committed,
/// never acknowledged).
///
/// Shared by every connection of one store; each connection keeps its own `SQLiteBusyState`.
public final class SQLiteBusyWait: Sendable {
    public let timeoutMilliseconds: Int32
    private let abandoned = Atomic<Bool>(false)

    public init(timeoutMilliseconds: Int32) {
        self.timeoutMilliseconds = max(0, timeoutMilliseconds)
    }

    /// From now on every wait for a lock gives up at its next retry (within 100 ms).
    public func abandon() { abandoned.store(true, ordering: .releasing) }

    var isAbandoned: Bool { abandoned.load(ordering: .acquiring) }
}

/// One connection's side of a `SQLiteBusyWait`: when its current wait began. Used only on the
/// thread that uses the connection (SQLite calls the busy handler there).
final class SQLiteBusyState {
    let policy: SQLiteBusyWait
    private var startedAt: UInt64 = 0
    /// SQLite's own steps for `busy_timeout` (sqliteDefaultBusyCallback), in milliseconds; then 100.
    private static let delays: [Int32] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    init(policy: SQLiteBusyWait) { self.policy = policy }

    /// Whether to try again after the `attempt`th time (0 first) the lock was found held;
    /// sleeps before saying yes.
    func retry(attempt: Int32) -> Bool {
        let now = MonotonicClock.nanoseconds()
        if attempt == 0 { startedAt = now }
        guard !policy.isAbandoned else { return false }
        let elapsed = Int64((now &- startedAt) / 1_000_000)
        let remaining = Int64(policy.timeoutMilliseconds) - elapsed
        guard remaining > 0 else { return false }
        let step = Int(attempt) < Self.delays.count ? Self.delays[Int(attempt)] : 100
        sqlite3_sleep(Int32(min(Int64(step), remaining)))
        return true
    }

    /// The C callback `sqlite3_busy_handler` takes; `context` is an unretained `SQLiteBusyState`.
    static let handler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, attempt in
        guard let context else { return 0 }
        return Unmanaged<SQLiteBusyState>.fromOpaque(context).takeUnretainedValue().retry(attempt: attempt) ? 1 : 0
    }
}
