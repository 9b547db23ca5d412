#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ
import LarderSystem

/// Bounded waiting for results: the connection is non-blocking and every wait is
/// a `poll(2)` that ends at the statement timeout or the call's deadline,
/// whichever comes first. A server that stopped answering (frozen, or its
/// machine gone) then costs that long, not the minutes TCP takes to give up.
extension PostgresConnection {
    /// Nanoseconds on `CLOCK_MONOTONIC`, the clock `deadline` is on.
    public static func monotonicNanoseconds() -> UInt64 { MonotonicClock.nanoseconds() }

    /// Flushes what was sent, then collects every result of it: the first error
    /// if there is one (later results are cleared), else the last result.
    /// On timeout the connection is closed: whatever it was doing is abandoned
    /// (an open transaction is rolled back by the server when it notices).
    func awaitResult(_ connection: OpaquePointer, sql: String) throws(PostgresError) -> OpaquePointer? {
        let limit = waitLimit()
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { break }
            guard flushed > 0 else { throw connectionError(sql: sql) }
            try wait(connection, events: Int16(POLLIN | POLLOUT), limit: limit, sql: sql)
            guard PQconsumeInput(connection) == 1 else { throw connectionError(sql: sql) }
        }
        var kept: OpaquePointer?
        while true {
            while PQisBusy(connection) == 1 {
                do throws(PostgresError) {
                    try wait(connection, events: Int16(POLLIN), limit: limit, sql: sql)
                } catch {
                    if let kept { PQclear(kept) }
                    throw error
                }
                guard PQconsumeInput(connection) == 1 else {
                    if let kept { PQclear(kept) }
                    throw connectionError(sql: sql)
                }
            }
            guard let result = PQgetResult(connection) else { return kept }
            if let previous = kept, Self.isError(previous) {
                PQclear(result)
            } else {
                if let previous = kept { PQclear(previous) }
                kept = result
            }
        }
    }

    private static func isError(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY
    }

    /// When waiting must stop, and whether that instant is the call's deadline.
    private func waitLimit() -> (at: UInt64, isDeadline: Bool)? {
        let timeout = statementTimeoutNanoseconds.map { Self.monotonicNanoseconds() + $0 }
        switch (timeout, deadline) {
        case (nil, nil): return nil
        case (let timeout?, nil): return (timeout, false)
        case (nil, let deadline?): return (deadline, true)
        case (let timeout?, let deadline?): return deadline <= timeout ? (deadline, true) : (timeout, false)
        }
    }

    /// Waits until the socket is ready for `events`, or throws (closing the connection) at `limit`.
    private func wait(_ connection: OpaquePointer, events: Int16, limit: (at: UInt64, isDeadline: Bool)?,
                      sql: String) throws(PostgresError) {
        var descriptor = pollfd(fd: PQsocket(connection), events: events, revents: 0)
        while true {
            var milliseconds: Int32 = -1
            if let limit {
                let now = Self.monotonicNanoseconds()
                if now >= limit.at { break }
                milliseconds = Int32(clamping: (limit.at - now + 999_999) / 1_000_000)
            }
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw connectionError(sql: sql) }
        }
        close()
        if limit?.isDeadline == true {
            throw PostgresError(sqlState: PostgresError.deadlineExceeded,
                                message: "the call's deadline passed while waiting for PostgreSQL at \(target)",
                                sql: sql)
        }
        let seconds = (statementTimeoutNanoseconds ?? 0) / 1_000_000_000
        throw PostgresError(sqlState: PostgresError.timedOut,
                            message: "PostgreSQL at \(target) did not answer within \(seconds) s (down, overloaded, "
                                + "or the statement waited for a lock another session holds); the connection was dropped",
                            sql: sql)
    }
}
