import Synchronization
import LarderSystem

/// Whether one store's database answers and takes writes, as last seen by any of
/// its connections or its monitor; announces each change once: lost (with the
/// reason) and regained (with how long it was gone).
final class PostgresAvailability: Sendable {
    private let available = Atomic<Bool>(true)
    /// Set while a table of the server's is missing (dropped, the database recreated): then only
    /// the monitor, finding every table again, makes the database available, not a transaction
    /// that happened not to need the missing table (health flapped: review 36 M2).
    private let schemaMissing = Atomic<Bool>(false)
    /// When the database was lost (monotonic nanoseconds); nil while available.
    private let lostAt = LockedValue<UInt64?>(nil)
    private let onChange: @Sendable (PostgresStore.AvailabilityChange) -> Void

    init(onChange: @escaping @Sendable (PostgresStore.AvailabilityChange) -> Void) {
        self.onChange = onChange
    }

    var isAvailable: Bool { available.load(ordering: .relaxed) }

    /// Records that the database could not be reached (or could not take writes).
    func markLost(_ reason: String) {
        guard isAvailable else { return }
        let first = lostAt.withLock { since -> Bool in
            guard since == nil else { return false }
            since = PostgresConnection.monotonicNanoseconds()
            available.store(false, ordering: .relaxed)
            return true
        }
        if first { onChange(.lost(reason: reason)) }
    }

    /// Records that a table of the server's is missing: the database is lost until `markSchemaPresent`.
    func markSchemaMissing(_ reason: String) {
        schemaMissing.store(true, ordering: .relaxed)
        markLost(reason)
    }

    /// From the monitor's probe: every table resolves.
    func markSchemaPresent() {
        schemaMissing.store(false, ordering: .relaxed)
    }

    /// Records that a transaction (or the monitor's probe) succeeded. An atomic load when nothing changed.
    func markAvailable() {
        guard !isAvailable, !schemaMissing.load(ordering: .relaxed) else { return }
        let since = lostAt.withLock { since -> UInt64? in
            defer { since = nil }
            available.store(true, ordering: .relaxed)
            return since
        }
        guard let since else { return }
        let seconds = Double(PostgresConnection.monotonicNanoseconds() - since) / 1e9
        onChange(.regained(unavailableSeconds: seconds))
    }
}
