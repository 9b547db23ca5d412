import LarderPostgres
import LarderServer

/// Logs the database going away (`database_lost`, warn) and coming back
/// (`database_regained`, info, with how long it was gone).
struct DatabaseAvailabilityLog: Sendable {
    let logger: Logger
    let database: String

    func log(_ change: PostgresStore.AvailabilityChange) {
        switch change {
        case .lost(let reason):
            logger.warn("database_lost", ["db": database, "error": reason])
        case .regained(let seconds):
            let rounded = (seconds * 1000).rounded() / 1000
            logger.info("database_regained", ["db": database, "unavailable_s": rounded])
        }
    }
}
