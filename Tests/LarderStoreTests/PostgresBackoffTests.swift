@testable import LarderPostgres
import Testing

/// Reconnecting after a failure: right away at first, then 100 ms doubling up to 1 s.
struct PostgresBackoffTests {
    @Test func delaysDoubleUpToTheMaximumAndResetOnSuccess() {
        var backoff = PostgresBackoff()
        #expect(backoff.remainingWait(now: 0) == nil, "the first attempt needs no wait")
        var now: UInt64 = 1_000_000_000
        var delays: [UInt64] = []
        for _ in 0..<6 {
            backoff.failed(now: now, error: "down")
            delays.append(backoff.remainingWait(now: now) ?? 0)
            now += delays.last ?? 0
            #expect(backoff.remainingWait(now: now) == nil, "allowed once the delay has passed")
        }
        #expect(delays == [100, 200, 400, 800, 1000, 1000].map { UInt64($0) * 1_000_000 })
        #expect(backoff.lastError == "down")
        backoff.succeeded()
        #expect(backoff.remainingWait(now: now) == nil)
        backoff.failed(now: now, error: "again")
        #expect(backoff.remainingWait(now: now) == 100_000_000, "a success starts over")
    }
}
