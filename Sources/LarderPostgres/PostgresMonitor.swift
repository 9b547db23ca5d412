import LarderSystem
import Synchronization

/// Checks the database on its own connection every `interval`, so health
/// turns NOT_SERVING when the database goes away (or turns read-only) even
/// without traffic, and SERVING again as soon as it is back.
final class PostgresMonitor: Sendable {
    private let stopped = Atomic<Bool>(false)
    /// Guards `stopped` changes against the probe thread's timed wait.
    private let wake = ThreadCondition()
    private let thread: LockedValue<SystemThread?> = LockedValue(nil)

    /// Starts probing at once; `connect` opens the probe's connection.
    init(interval: Duration, availability: PostgresAvailability,
         connect: @escaping @Sendable () throws(PostgresError) -> PostgresConnection) {
        let milliseconds = Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        let nanoseconds = UInt64(max(10, milliseconds)) * 1_000_000
        let thread = SystemThread(name: "larder-pg-monitor") { [self] in
            var probe: PostgresConnection?
            while !stopped.load(ordering: .relaxed) {
                probe = Self.check(probe, availability: availability, connect: connect)
                wake.withLock {
                    if !stopped.load(ordering: .relaxed) { _ = wake.wait(nanoseconds: nanoseconds) }
                }
            }
            probe?.close()
        }
        self.thread.withLock { $0 = thread }
    }

    /// One probe: reconnects when needed, then asks whether the session takes writes. A
    /// connection that was idle and turns out dead (the server ended the session: an
    /// administrator, `idle_session_timeout`) is replaced and asked again at once: only the
    /// database failing a fresh connection counts as lost.
    private static func check(_ probe: PostgresConnection?, availability: PostgresAvailability,
                              connect: @Sendable () throws(PostgresError) -> PostgresConnection) -> PostgresConnection? {
        do throws(PostgresError) {
            let reused = probe.map { !$0.isStale } ?? false
            let connection: PostgresConnection
            if let probe {
                if !reused { try probe.reconnect() }
                connection = probe
            } else {
                connection = try connect()
            }
            let readOnly: PostgresResult
            do throws(PostgresError) {
                readOnly = try connection.query(probeSQL)
            } catch where reused && error.isConnectionProblem {
                try connection.reconnect()
                readOnly = try connection.query(probeSQL)
            }
            guard readOnly.rowCount == 1, readOnly.string(row: 0, column: 0) == "off" else {
                connection.close()
                availability.markLost("the database session is read-only (a standby?)")
                return connection
            }
            let missing = (try? readOnly.int64(row: 0, column: 1)) ?? 0
            guard missing == 0 else {
                availability.markSchemaMissing("the database lacks \(missing) of this server's tables (dropped, or the database "
                    + "recreated, while the server ran): restore the database, or restart larder-server to create them "
                    + "in an empty one")
                return connection
            }
            availability.markSchemaPresent()
            availability.markAvailable()
            return connection
        } catch {
            availability.markLost(error.message)
            return probe
        }
    }

    /// Whether the session is read-only, and how many of the server's tables its search_path
    /// does not find: a database dropped and recreated under a running server was SERVING with
    /// every call failing (audit 37 L1).
    static let probeSQL = """
        SELECT current_setting('transaction_read_only'), (SELECT count(*) FROM unnest(ARRAY['category_groups', \
        'item_categories', 'locations', 'meal_records']) AS t(name) WHERE to_regclass(name) IS NULL)
        """

    /// Stops the probing and waits for it to end. Idempotent.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wake.withLock { wake.signal() }
        thread.withLock { $0.take() }?.join()
    }
}
