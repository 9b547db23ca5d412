@testable import LarderStore
import LarderWire
import Testing

/// The writes a lock held up, as the writer keeps them between rounds (`LockWaitingWrites`),
/// on a clock the test sets.
@Suite("Lock-waiting writes")
struct LockWaitingWritesTests {
    static let ms: UInt64 = 1_000_000
    static func write(_ source: UInt64) -> StoreWrite { StoreWrite(source: source, { _ in 0 }, completion: { _ in }) }
    static func entry(_ source: UInt64, since: UInt64?, tries: Int = 1) -> LockWaitingWrites.Entry {
        LockWaitingWrites.Entry(job: write(source), waitingSince: since, tries: tries)
    }

    /// Review 18 H1: each batch that set a new write aside moved the next round later, so while
    /// blocked writes kept coming the waiting ones were never tried again, nor failed at the limit.
    @Test func newWritesSetAsideNeverPutTheNextRoundOff() {
        var waiting = LockWaitingWrites(limit: 9_000 * Self.ms)
        waiting.setAside([Self.entry(1, since: 0)], round: false, blockedAgain: false, now: 0)
        #expect(waiting.nanosecondsUntilDue(now: 0) == 50 * Self.ms)
        // Fresh writes of other sources are set aside every 30 ms: the round stays due at 50 ms.
        for step in 1...5 {
            let now = UInt64(step) * 30 * Self.ms
            waiting.setAside([Self.entry(UInt64(step + 1), since: now)], round: false, blockedAgain: false, now: now)
        }
        #expect(waiting.nanosecondsUntilDue(now: 150 * Self.ms) == 0, "due since 50 ms")
    }

    @Test func writesPastTheLimitFailUntriedAndTheRestOfTheirSourceGoesOn() {
        var waiting = LockWaitingWrites(limit: 9_000 * Self.ms)
        waiting.setAside([Self.entry(1, since: 0)], round: false, blockedAgain: false, now: 0)
        waiting.append(Self.write(1), now: 5_000 * Self.ms)
        #expect(waiting.holds(source: 1))
        let (expired, retry) = waiting.takeIfDue(now: 9_000 * Self.ms, max: 512)
        #expect(expired.count == 1 && expired[0].waitingSince == 0)
        #expect(retry.count == 1 && retry[0].waitingSince == 5_000 * Self.ms, "the write behind it is tried")
        #expect(!waiting.holds(source: 1) && waiting.isEmpty)
    }

    @Test func sourcesTriedLeastGoFirstEachSourceInOrderAndAtMostMax() {
        var waiting = LockWaitingWrites(limit: 9_000 * Self.ms)
        waiting.setAside([Self.entry(1, since: 0, tries: 3), Self.entry(2, since: 0, tries: 1),
                          Self.entry(1, since: 0, tries: 0), Self.entry(3, since: 0, tries: 0)],
                         round: false, blockedAgain: false, now: 0)
        let (_, retry) = waiting.takeIfDue(now: 100 * Self.ms, max: 3)
        #expect(retry.map(\.job.source) == [3, 2, 1], "by the tries of each source's first write")
        #expect(retry.last?.tries == 3, "source 1's first write before its second")
        #expect(waiting.holds(source: 1), "source 1's second write waits on, and its later writes behind it")
    }

    @Test func theWaitDoublesOnlyWhileRetriedWritesFindTheLockTaken() {
        var waiting = LockWaitingWrites(limit: 9_000 * Self.ms)
        waiting.setAside([Self.entry(1, since: 0)], round: false, blockedAgain: false, now: 0)
        var now: UInt64 = 50 * Self.ms
        for expected: UInt64 in [100, 200, 400, 400] {
            let (_, retry) = waiting.takeIfDue(now: now, max: 512)
            waiting.setAside(retry, round: true, blockedAgain: true, now: now)
            #expect(waiting.nanosecondsUntilDue(now: now) == expected * Self.ms)
            now += expected * Self.ms
        }
        let (_, retry) = waiting.takeIfDue(now: now, max: 512)
        waiting.setAside(retry, round: true, blockedAgain: false, now: now)
        #expect(waiting.nanosecondsUntilDue(now: now) == 50 * Self.ms, "a round whose retries were not blocked again")
    }

    @Test func sourceZeroKeepsNoOrder() {
        var waiting = LockWaitingWrites(limit: 9_000 * Self.ms)
        waiting.setAside([Self.entry(0, since: 0)], round: false, blockedAgain: false, now: 0)
        #expect(!waiting.holds(source: 0))
    }
}
